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

Before this check (session 17), 88 of the 1,496 exchanges differed, all in chat ``prompt_tokens``:
68 with ``tool_choice: "none"`` (SGLang renders no tools then: fixed,
:func:`mockoss.profiles.sglang.chat.chat_prompt_tokens`) and the 20 of :data:`DIFFERENCES`.
Where mockoss differs, the exchange is listed there with the line responsible; its case's test is
then an expected failure, and fails if a listed exchange matches again or another one differs.
``reasoning_tokens`` matched everywhere with the profile's defaults.
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

#: Why the ``bash`` tool's prompt differs: its ``cmd`` parameter is ``{"type": "array"}`` without ``items``.
_ARRAY_WITHOUT_ITEMS = (
    "prompt_tokens one more than SGLang's: SGLang renders the prompt with the model's chat template, whose "
    "render_typescript_type writes an array parameter without 'items' as 'any[]' (openai/gpt-oss-20b "
    'chat_template.jinja, the {{- "any[]" }} branch; SGLang\'s serving_chat.py:2198, '
    "_render_and_encode_chat_template), where mockoss counts the Harmony renderer's 'Array<any>' "
    "(mockoss.harmony.prompt, as vLLM renders it); left: a chat-template prompt counter for the sglang "
    "profile is a change of its own"
)
#: (case glob, exchange glob) → why mockoss differs from SGLang 0.5.23 and where in mockoss. Each
#: matching exchange is a strict expected failure.
DIFFERENCES: dict[tuple[str, str], str] = {
    (case, exchange): _ARRAY_WITHOUT_ITEMS
    for case in (
        "scenario-doubled-channel-tool-call-vanishes-0",
        "scenario-extra-content-type-header-error-0",
        "scenario-malformed-header-duplicate-recipient-0",
        "scenario-tool-name-with-channel-token-0",
    )
    for exchange in (
        "chat-nostream-tools",
        "chat-nostream-tools-choice-required",
        "chat-stream-tools-usage",
        "chat-nostream-tools-no-separate-reasoning",
        "chat-nostream-tools-choice-named",
    )
}


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
    stale = sorted(listed - {o.exchange for o in failing})
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
    assert not stale, f"listed in DIFFERENCES but identical now (remove them): {stale}"
    if listed:
        pytest.xfail("; ".join(sorted({_reason(golden.case, e) or "" for e in listed})))


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
