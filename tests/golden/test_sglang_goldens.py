"""The ``sglang`` profile against goldens from SGLang 0.5.23's own serving code (no SGLang needed).

``tests/golden/sglang-0.5.23/`` holds, per case of :mod:`mockoss.golden.cases`, what SGLang's
FastAPI app answered (sgl-project/sglang v0.5.23 from the package index: ``http_server.py``,
``OpenAIServingChat`` with the ``gpt-oss`` reasoning parser and tool-call detector,
``OpenAIServingResponses`` under openai-harmony 0.0.4, ``DetokenizerManager``'s decoding and the
scheduler's ``Req.update_reasoning_tokens``), the engine replaced by the case's tokens; recorded by
``tools/goldens/sglang_serving_code.py`` (its docstring and ``sglang_serving_engine.py``'s say what
stands in). The requests are the shared matrix plus the SGLang-only ones of
:mod:`mockoss.golden.sglang_cases` (``stream_options``, ``separate_reasoning``,
``stream_reasoning``, streamed ``tool_choice``). Each exchange is answered by mockoss's ``sglang``
profile in process and compared byte for byte after normalisation (:mod:`mockoss.golden.normalise`,
through ``golden_support.compare``), as the vLLM goldens are.

Where mockoss differs, the exchange is an expected failure (strict) listed in :data:`DIFFERENCES`
with the SGLang line responsible: none. On the first recording (session 17) all 1,496 exchanges
were byte-identical, with the profile's defaults, ``reasoning_tokens`` included.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from pathlib import Path

import pytest
from golden_support import DIFFERENT, IDENTICAL, KNOWN, compare_file, goldens

from mockoss.golden.cases import all_cases
from mockoss.golden.sglang_cases import sglang_exchanges

DIRECTORY = Path(__file__).resolve().parent / "sglang-0.5.23"
REGENERATE = "tools/goldens/sglang_serving_code.py --sglang-python VENV/bin/python (its docstring builds VENV)"

#: (case glob, exchange glob) → why mockoss differs from SGLang 0.5.23 (file:line in the wheel) and
#: where in mockoss. Each matching exchange is a strict expected failure. Empty: none differ.
DIFFERENCES: dict[tuple[str, str], str] = {}


def _reason(case: str, exchange: str) -> str | None:
    return next(
        (
            why
            for (c, e), why in DIFFERENCES.items()
            if fnmatch.fnmatchcase(case, c) and fnmatch.fnmatchcase(exchange, e)
        ),
        None,
    )


def _params() -> list[object]:
    params = []
    for index, golden in enumerate(goldens(DIRECTORY)):
        reasons = {_reason(golden.case, e.id) for e in golden.exchanges} - {None}
        marks = [pytest.mark.xfail(strict=True, reason="; ".join(sorted(reasons)))] if reasons else []  # type: ignore[arg-type]
        params.append(pytest.param(index, id=golden.case, marks=marks))
    return params


@pytest.mark.parametrize("index", _params())
def test_sglang_profile_matches_sglang_serving_code(index: int, record_property: Callable[[str, object], None]) -> None:
    outcomes = compare_file(DIRECTORY, index)
    golden = goldens(DIRECTORY)[index]
    counts = {IDENTICAL: 0, KNOWN: 0, DIFFERENT: 0}
    for outcome in outcomes:
        counts[outcome.result] += 1
    record_property("golden", {"directory": DIRECTORY.name, **counts})  # read by conftest's summary
    failing = [o for o in outcomes if o.result != IDENTICAL]
    unexplained = [o for o in failing if _reason(golden.case, o.exchange) is None]
    text = "\n\n".join(f"--- {golden.case} {o.exchange}\n{o.diff}" for o in (unexplained or failing)[:3])
    assert not unexplained, (
        f"{len(unexplained)}/{len(outcomes)} exchanges differ from SGLang 0.5.23's serving code:\n{text}"
    )
    assert not failing, f"expected differences ({len(failing)}):\n{text}"


def test_goldens_cover_every_case_as_the_case_list_builds_it() -> None:
    """Every case has a golden recorded for the same tokens and the same requests (a new scenario,
    fault kind or exchange makes this fail until the goldens are regenerated)."""
    recorded = {golden.case: golden for golden in goldens(DIRECTORY)}
    stale = []
    for case in all_cases():
        golden = recorded.pop(case.id, None)
        if golden is None:
            stale.append(f"{case.id}: no golden")
        elif golden.completion.get("tokens") != list(case.completion.tokens):
            stale.append(f"{case.id}: the completion changed")
        elif [(e.id, e.request) for e in golden.exchanges] != [(e.id, e.request) for e in sglang_exchanges(case)]:
            stale.append(f"{case.id}: the exchanges or request bodies changed")
    stale.extend(f"{name}: no such case any more" for name in recorded)
    assert not stale, f"{DIRECTORY.name} is stale; regenerate it with {REGENERATE}:\n" + "\n".join(stale)


def test_goldens_name_the_sglang_profile_and_level() -> None:
    header = goldens(DIRECTORY)[0].header
    assert (header["server"], header["version"], header["level"]) == ("sglang", "0.5.23", "serving-code")
    assert header["profile"] == {"name": "sglang", "switches": {}}
    assert header["harmony_library"] == "openai-harmony 0.0.4"


def test_every_listed_difference_names_a_recorded_exchange() -> None:
    exchanges = {(g.case, e.id) for g in goldens(DIRECTORY) for e in g.exchanges}
    stale = [
        key
        for key in DIFFERENCES
        if not any(fnmatch.fnmatchcase(c, key[0]) and fnmatch.fnmatchcase(e, key[1]) for c, e in exchanges)
    ]
    assert not stale, f"DIFFERENCES names no recorded exchange: {stale}"
