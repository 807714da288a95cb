"""The ``sglang`` profile against goldens from SGLang 0.5.23's own serving code (no SGLang needed).

``tests/golden/sglang-0.5.23/`` holds, per case of :mod:`mockoss.golden.cases`, what SGLang's
FastAPI app answered (sgl-project/sglang v0.5.23 from the package index: ``http_server.py``,
``OpenAIServingChat`` with the model's own chat template (loaded by ``TemplateManager``, rendered
by ``_apply_jinja_template``), the ``gpt-oss`` reasoning parser and tool-call detector,
``OpenAIServingResponses`` under openai-harmony 0.0.4, ``DetokenizerManager``'s decoding and the
scheduler's ``Req.update_reasoning_tokens``), the engine replaced by the case's tokens; recorded by
``tools/goldens/sglang_serving_code.py`` (its docstring and ``sglang_serving_engine.py``'s say what
stands in). The requests are the shared matrix plus the SGLang-only ones of
:mod:`mockoss.golden.sglang_cases` (``stream_options``, ``separate_reasoning``,
``stream_reasoning``, streamed ``tool_choice``). Each exchange is answered by mockoss's ``sglang``
profile in process and compared byte for byte after normalisation (:mod:`mockoss.golden.normalise`,
through ``golden_support.compare``), as the vLLM goldens are.

Session 17: with the chat template stubbed (mockoss's own prompt count) all 1,496 exchanges of the
shared matrix and the SGLang-only variants were identical; with the model's template rendered by
SGLang, 88 differed, all chat ``prompt_tokens``: 68 with ``tool_choice: "none"`` (SGLang renders no
tools then) and 20 more. The 9 prompt shapes of :data:`mockoss.golden.sglang_cases.PROMPT_CASE`
added 4: a tool without a description is SGLang's 400 (the switch ``tool_description_required``,
on for these goldens: :func:`mockoss.profiles.sglang.chat.template_refusal`), 3 more.
Session 18: the profile counts the chat prompt by rendering the same template
(:mod:`mockoss.profiles.sglang.template`), and the refusal is that render's error: every exchange
identical, none listed.
Where mockoss differs, the exchange is listed in :data:`DIFFERENCES` with the line responsible; its
case's test is then an expected failure, and fails if a listed exchange matches again or another
one differs. ``reasoning_tokens`` matched everywhere with the profile's defaults.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from pathlib import Path

import pytest
from golden_support import DIFFERENT, IDENTICAL, KNOWN, compare_file, goldens, stale

from mockoss.golden.sglang_cases import sglang_exchanges

DIRECTORY = Path(__file__).resolve().parent / "sglang-0.5.23"
REGENERATE = (
    "tools/goldens/sglang_serving_code.py --sglang-python VENV/bin/python --chat-template FILE "
    "(its docstring builds VENV and names FILE)"
)

#: Where mockoss differs from SGLang 0.5.23: (case glob, exchange glob) -> why, and where in mockoss.
#: Empty since session 18: the 23 chat ``prompt_tokens`` differences (an array parameter without
#: ``items``, tool-call and tool-result turns, nullable and nested schemas) were the Harmony prompt
#: counted where SGLang renders the model's chat template (serving_chat.py:2198,
#: _render_and_encode_chat_template); the sglang profile now renders that template
#: (mockoss.profiles.sglang.template).
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


@pytest.mark.parametrize("index", range(len(goldens(DIRECTORY))), ids=lambda i: goldens(DIRECTORY)[i].case)
def test_sglang_profile_matches_sglang_serving_code(index: int, record_property: Callable[[str, object], None]) -> None:
    """Every exchange identical, or listed in :data:`DIFFERENCES` and still different (then the
    test is an expected failure; a listed exchange that matches again fails it: strict)."""
    outcomes = compare_file(DIRECTORY, index)
    golden = goldens(DIRECTORY)[index]
    listed = {o.exchange for o in outcomes if _reason(golden.case, o.exchange) is not None}
    failing = [o for o in outcomes if o.result != IDENTICAL]
    unexplained = [o for o in failing if o.exchange not in listed]
    unlisted = sorted(listed - {o.exchange for o in failing})
    known = len(failing) - len(unexplained)
    record_property(
        "golden",
        {
            "directory": DIRECTORY.name,
            IDENTICAL: len(outcomes) - len(failing),
            KNOWN: known,
            DIFFERENT: len(unexplained),
        },
    )  # read by conftest's summary
    text = "\n\n".join(f"--- {golden.case} {o.exchange}\n{o.diff}" for o in unexplained[:3])
    assert not unexplained, (
        f"{len(unexplained)}/{len(outcomes)} exchanges differ from SGLang 0.5.23's serving code:\n{text}"
    )
    assert not unlisted, f"listed in DIFFERENCES but identical now (remove them): {unlisted}"
    if listed:
        pytest.xfail("; ".join(sorted({_reason(golden.case, e) or "" for e in listed})))


def test_goldens_cover_every_case_as_the_case_list_builds_it() -> None:
    """Every case has a golden recorded for the same tokens and the same requests (a new scenario,
    fault kind or exchange makes this fail until the goldens are regenerated)."""
    problems = stale(goldens(DIRECTORY), sglang_exchanges)
    assert not problems, f"{DIRECTORY.name} is stale; regenerate it with {REGENERATE}:\n" + "\n".join(problems)


def test_goldens_name_the_sglang_profile_and_level() -> None:
    header = goldens(DIRECTORY)[0].header
    assert (header["server"], header["version"], header["level"]) == ("sglang", "0.5.23", "serving-code")
    assert header["profile"] == {"name": "sglang", "switches": {"tool_description_required": True}}
    assert header["harmony_library"] == "openai-harmony 0.0.4"


def test_every_listed_difference_names_a_recorded_exchange() -> None:
    exchanges = {(g.case, e.id) for g in goldens(DIRECTORY) for e in g.exchanges}
    unknown = [
        key
        for key in DIFFERENCES
        if not any(fnmatch.fnmatchcase(c, key[0]) and fnmatch.fnmatchcase(e, key[1]) for c, e in exchanges)
    ]
    assert not unknown, f"DIFFERENCES names no recorded exchange: {unknown}"
