"""The ``llamacpp`` profile against llama.cpp b9553's own chat parser (goldens, no build needed).

``tests/golden/llamacpp-b9553/`` holds, per case of :mod:`mockoss.golden.cases`, what llama.cpp's
``common`` library (llama.cpp tag b9553 as vendored at Telosnex/fllama@1d28604d ``src/llama.cpp``)
made of the case's tokens, following llama-server's steps: the gpt-oss template's chat params, the
PEG parser of ``common/chat.cpp:1059`` (``common_chat_params_init_gpt_oss``), ``common_chat_parse``
final and on every streamed prefix, ``compute_diffs`` and the OAI JSON of message and deltas.
Recorded by ``tools/goldens/llamacpp_b9553.py`` with the harness ``llamacpp_harness.cpp`` (build:
``llamacpp_build.sh``; both docstrings give the commands). Only what the parser decides is
recorded: ``choices[].finish_reason/index/message`` (non-streamed), ``choices[].finish_reason/
index/delta`` per chunk (streamed), and the error a failed parse becomes. mockoss's reply to the
same request body with the same completion is cut to those fields, normalised the same way
(:mod:`mockoss.golden.normalise`: tool call ids become their shape) and compared as JSON text,
key order included.

The profile release compared is ``llamacpp@b9553`` (the header's ``profile``): the release on the
llamacpp timeline (mockoss/profiles/llamacpp/releases.py) whose switches carry what these goldens
showed where b9553 differs from the build the profile follows by default
(``common/parsers/gpt-oss.cpp@2629d7b5``, ggml-org/llama.cpp#27764, 2026-08-26, later):
``parse_error="position"`` (common/chat.cpp:2529), ``tool_call_opens="header"``
(common/chat.cpp:1167-1179, :mod:`mockoss.profiles.llamacpp.grammar_b9553`) and
``template_items_check`` (common/jinja/runtime.cpp:818-822). Before those switches, 289 of the 884
exchanges differed (strict xfails, commit 09803fe).

Where mockoss differs, the exchange is an expected failure (strict) listed in :data:`DIFFERENCES`
with the llama.cpp line responsible: none now.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from mockoss.golden.cases import CHAT, all_cases, exchanges
from mockoss.golden.normalise import dumps, normalise_body, normalise_frames
from mockoss.golden.store import GoldenFile, read_golden_dir
from mockoss.harmony import Completion
from mockoss.scenario.loader import Step
from mockoss.server.core import MockServer

DIRECTORY = Path(__file__).resolve().parent / "llamacpp-b9553"
REGENERATE = (
    "regenerate with tools/goldens/llamacpp_build.sh FLLAMA_GIT_DIR /tmp/llamacpp-b9553 && "
    ".venv/bin/python tools/goldens/llamacpp_b9553.py /tmp/llamacpp-b9553/llamacpp_harness "
    "/tmp/llamacpp-b9553/src/llama.cpp/models/templates/openai-gpt-oss-120b.jinja"
)

#: (case glob, exchange glob) → why mockoss differs from llama.cpp b9553 (path:line in the b9553
#: tree) and where in mockoss. Each matching exchange is a strict expected failure. Empty: the three
#: differences of commit 09803fe are switches of ``llamacpp@b9553`` now.
DIFFERENCES: dict[tuple[str, str], str] = {}
#: What a failed final parse says at b9553 (common/chat.cpp:2529): the position and the rest of
#: the input (:func:`mockoss.profiles.llamacpp.gptoss.failed_parse_message`).
B9553_PARSE_ERROR = re.compile(r"Failed to parse input at pos \d+: ", re.DOTALL)


@cache
def goldens() -> tuple[GoldenFile, ...]:
    return tuple(read_golden_dir(DIRECTORY))


@cache
def server(profile: str) -> MockServer:
    return MockServer(profile=profile, request_log_limit=1)


def _choice(choice: dict[str, Any], part: str) -> dict[str, Any]:
    return {"finish_reason": choice.get("finish_reason"), "index": choice.get("index"), part: choice.get(part)}


def _error(data: dict[str, Any]) -> dict[str, Any]:
    error = data.get("error") or {}
    return {"error": {"code": error.get("code"), "message": error.get("message"), "type": error.get("type")}}


def _cut_body(raw: bytes) -> str:
    data = json.loads(raw)
    if "error" in data:
        return json.dumps(_error(data))
    return json.dumps({"choices": [_choice(c, "message") for c in data.get("choices", [])]})


def _cut_frames(frames: list[bytes | str]) -> list[str]:
    out = []
    for frame in frames:
        text = frame.decode() if isinstance(frame, bytes) else frame
        for line in text.splitlines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                out.append("data: [DONE]")
                continue
            data = json.loads(payload)
            if "error" in data:
                out.append("data: " + json.dumps(_error(data)))
            elif data.get("choices"):  # the include_usage chunk has none
                out.append("data: " + json.dumps({"choices": [_choice(c, "delta") for c in data["choices"]]}))
    return out


def mockoss_answer(golden: GoldenFile, index: int) -> tuple[int, Any]:
    """mockoss's (status, normalised cut frames or body) for the golden's ``index``-th exchange."""
    exchange = golden.exchanges[index]
    completion = Completion(text=golden.completion["text"], tokens=tuple(golden.completion["tokens"]))
    reply, _ = server(golden.header["profile"]).respond(
        "chat", json.dumps(exchange.request).encode(), {}, step=Step(index=0, completion=completion, error=None)
    )
    if reply.streamed:
        return reply.status, normalise_frames(_cut_frames(list(reply.frames)))
    return reply.status, normalise_body(_cut_body(reply.body))


def _recorded(exchange: Any) -> tuple[int, Any]:
    return exchange.status, exchange.frames if exchange.frames is not None else exchange.body


def _messages(answer: Any) -> list[str]:
    """The error messages of a cut answer (a body, or a list of ``data:`` frames)."""
    items = [json.loads(f[6:]) for f in answer if f.startswith("data: {")] if isinstance(answer, list) else [answer]
    return [item["error"]["message"] for item in items if isinstance(item, dict) and "error" in item]


def _reasons(case: str, ident: str) -> list[str]:
    """The :data:`DIFFERENCES` entries that name this exchange."""
    return [
        reason
        for (case_glob, ident_glob), reason in DIFFERENCES.items()
        if fnmatch.fnmatchcase(case, case_glob) and fnmatch.fnmatchcase(ident, ident_glob)
    ]


def _params() -> list[Any]:
    out = []
    for g, golden in enumerate(goldens()):
        for e, exchange in enumerate(golden.exchanges):
            reasons = _reasons(golden.case, exchange.id)
            marks = [pytest.mark.xfail(strict=True, reason=" / ".join(reasons))] if reasons else []
            out.append(pytest.param(g, e, id=f"{golden.case}/{exchange.id}", marks=marks))
    return out


@pytest.mark.parametrize(("g", "e"), _params())
def test_llamacpp_profile_parses_as_llamacpp_b9553(
    g: int, e: int, record_property: Callable[[str, object], None]
) -> None:
    """Same status, finish_reason, message or deltas, and errors with the same words in the same
    places."""
    golden = goldens()[g]
    status, want = _recorded(golden.exchanges[e])
    got_status, got = mockoss_answer(golden, e)
    identical = (got_status, dumps(got)) == (status, dumps(want))
    known = _reasons(golden.case, golden.exchanges[e].id)
    result = "identical" if identical else "known" if known else "different"
    record_property("golden", {"directory": DIRECTORY.name, result: 1})  # conftest.py's summary
    if isinstance(want, list) and isinstance(got, list):
        assert (got_status, got) == (status, want), "\n".join(["llama.cpp b9553:", *want, "mockoss:", *got])
    else:
        assert (got_status, dumps(got)) == (status, dumps(want))


def test_failed_parse_message_is_b9553s() -> None:
    """Where b9553's parse fails, mockoss's error says what b9553's does, position and rest of the
    input included (``parse_error="position"`` with b9553's grammar: where a failed parse stops
    depends on the grammar's literals and choices, :mod:`mockoss.profiles.llamacpp.grammar_b9553`)."""
    pairs = []
    for g, golden in enumerate(goldens()):
        for e, exchange in enumerate(golden.exchanges):
            want = [m for m in _messages(_recorded(exchange)[1]) if B9553_PARSE_ERROR.match(m)]
            if want:
                pairs.append((f"{golden.case}/{exchange.id}", want, _messages(mockoss_answer(golden, e)[1])))
    assert len(pairs) > 100  # the goldens hold failed parses to compare
    wrong = [(ident, want[0], got) for ident, want, got in pairs if got != want]
    assert not wrong, f"{len(wrong)}/{len(pairs)} failed-parse messages differ, e.g. {wrong[0]}"


def test_goldens_cover_every_case_and_its_chat_requests() -> None:
    """Every case has a golden recorded for its current tokens and chat request bodies."""
    recorded = {golden.case: golden for golden in goldens()}
    stale = []
    for case in all_cases():
        golden = recorded.pop(case.id, None)
        if golden is None:
            stale.append(f"{case.id}: no golden")
            continue
        if golden.completion.get("tokens") != list(case.completion.tokens):
            stale.append(f"{case.id}: the completion changed")
        chat = [(x.id, x.request) for x in exchanges(case) if x.endpoint == CHAT]
        if [(x.id, x.request) for x in golden.exchanges][: len(chat)] != chat:
            stale.append(f"{case.id}: the chat exchanges or request bodies changed")
    stale.extend(f"{name}: no such case any more" for name in recorded)
    assert not stale, f"{DIRECTORY.name} is stale; {REGENERATE}:\n" + "\n".join(stale)


def test_header_names_the_source_and_the_profile() -> None:
    header = goldens()[0].header
    assert (header["server"], header["version"], header["level"], header["profile"]) == (
        "llamacpp",
        "b9553",
        "chat-parser",
        "llamacpp@b9553",
    )
    assert "1d28604d" in header["source"]
