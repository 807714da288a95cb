"""The ``ollama`` profile against Ollama v0.33.0-rc2's own Go code (goldens, no Go needed).

``tests/golden/ollama-0.33.0-rc2/`` holds, per case of :mod:`mockoss.golden.cases`, what Ollama's
packages at ollama/ollama@fb3076099 (``model/parsers`` → ``harmony.HarmonyMessageHandler``, ``api``,
``openai``) made of the case's tokens, as llama-server would stream them to Ollama's runner, with
the glue of ``server/routes.go`` (``ChatHandler``'s callback, ``writeChatResponse``,
``streamResponse``), ``llm/llama_server.go`` and ``middleware/openai.go`` restated in
``tools/goldens/ollama_harness.go``. Recorded by ``tools/goldens/ollama_0_33_0_rc2.py`` (build:
``tools/goldens/ollama_build.sh``; both docstrings give the commands). Exchanges: the case list's
``/v1/chat/completions`` requests and six ``/api/chat`` ones.

Compared: the status, and what the parser and the handler decide: ``/api/chat``, each NDJSON line's
``message``, ``done``, ``done_reason`` (or its ``error``); ``/v1/chat/completions``, each choice's
``finish_reason``, ``index`` and ``message``/``delta`` (or the ``error`` object), ``data: [DONE]``
kept. Timestamps, durations, usage and model names are the harness's fixed values and are not
compared; tool call ids compare by shape (:mod:`mockoss.golden.normalise`).

Where mockoss differs, the exchange is an expected failure (strict) listed in :data:`DIFFERENCES`
with the Go line responsible: none now. Before commit eca8c24 (``engine_completion`` in
:mod:`mockoss.profiles.ollama.generation`), 80 of the 1496 exchanges differed, all in
``eval_count``/``completion_tokens`` of the five cases whose script has no end token (llama-server
decodes the ``<|endoftext|>`` that ends them).
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

from mockoss.golden.cases import CHAT, MODEL, all_cases, exchanges
from mockoss.golden.normalise import Normaliser, dumps, split_sse
from mockoss.golden.store import GoldenFile, read_golden_dir
from mockoss.harmony import Completion
from mockoss.scenario.loader import Step
from mockoss.server.core import MockServer

DIRECTORY = Path(__file__).resolve().parent / "ollama-0.33.0-rc2"
REGENERATE = (
    "regenerate with tools/goldens/ollama_build.sh OLLAMA_GIT_DIR /tmp/ollama-v0.33.0-rc2 && "
    ".venv/bin/python tools/goldens/ollama_0_33_0_rc2.py /tmp/ollama-v0.33.0-rc2/ollama_harness"
)
NATIVE_CHAT = "/api/chat"

#: (case glob, exchange glob) → why mockoss differs from Ollama fb3076099 (path:line) and where in
#: mockoss. Each matching exchange is a strict expected failure.
DIFFERENCES: dict[tuple[str, str], str] = {}


@cache
def goldens() -> tuple[GoldenFile, ...]:
    return tuple(read_golden_dir(DIRECTORY))


@cache
def server() -> MockServer:
    return MockServer(profile="ollama", served_model_names=[MODEL], request_log_limit=1)


#: Clock readings and the prompt's size (the harness's fixed values): compared as keys only;
#: ``eval_count``/``completion_tokens`` (llama-server's ``predicted_n``) are compared.
_CLOCK_KEYS = frozenset(
    {"created_at", "total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_duration"}
)
_USAGE_KEYS = frozenset({"prompt_tokens", "total_tokens"})
#: ``chatcmpl-%d`` of ``rand.Intn(999)`` (middleware/openai.go:478), raw or as the golden store
#: normalised it (``<chatcmpl-:270#1>``: too short for a shape, the number stays).
_CHATCMPL = re.compile(r"chatcmpl-\d{1,3}|<chatcmpl-:\d{1,3}#\d+>")
#: ``call_`` + 8 of ``[a-z0-9]`` (server/routes.go:2305-2312): all hex now and then, so one shape.
_CALL_SHAPE = re.compile(r"<call_:(?:hex|alnum)8#")


def _cut_native(item: dict[str, Any]) -> dict[str, Any]:
    return {k: "<N>" if k in _CLOCK_KEYS else v for k, v in item.items()}


def _cut_openai(item: dict[str, Any]) -> dict[str, Any]:
    out = dict(item)
    if isinstance(out.get("id"), str) and _CHATCMPL.fullmatch(out["id"]):
        out["id"] = "chatcmpl-<n>"
    if isinstance(out.get("usage"), dict):
        out["usage"] = {k: "<N>" if k in _USAGE_KEYS else v for k, v in out["usage"].items()}
    return out


def cut(endpoint: str, status: int, stream: bool, payload: Any) -> tuple[int, str]:
    """(status, the compared part as text). ``payload``: a parsed body, or a stream's frames/lines."""
    normaliser = Normaliser()
    if not stream or status != 200:
        item = payload if isinstance(payload, dict) else {"text": payload}
        part = _cut_native(item) if endpoint == NATIVE_CHAT else _cut_openai(item)
        return status, _CALL_SHAPE.sub("<call_:8#", dumps(normaliser.json(part)))
    out = []
    for frame in payload:
        if endpoint == NATIVE_CHAT:
            out.append(dumps(normaliser.json(_cut_native(json.loads(frame)))))
            continue
        for line in frame.splitlines():
            if line.strip() == "data: [DONE]":
                out.append("data: [DONE]")
            elif line.startswith("data:"):
                out.append("data: " + dumps(normaliser.json(_cut_openai(json.loads(line[5:])))))
    return status, _CALL_SHAPE.sub("<call_:8#", "\n".join(out))


def mockoss_answer(golden: GoldenFile, index: int) -> tuple[int, str]:
    """mockoss's cut answer to the golden's ``index``-th exchange, from the same completion."""
    exchange = golden.exchanges[index]
    completion = Completion(text=golden.completion["text"], tokens=tuple(golden.completion["tokens"]))
    endpoint = "chat" if exchange.endpoint == CHAT else "ollama.chat"
    reply, _ = server().respond(
        endpoint, json.dumps(exchange.request).encode(), {}, step=Step(index=0, completion=completion, error=None)
    )
    if reply.streamed and reply.status == 200:
        text = b"".join(f if isinstance(f, bytes) else f.encode() for f in reply.frames).decode()
        frames = split_sse(text) if exchange.endpoint == CHAT else [x for x in text.split("\n") if x]
        return cut(exchange.endpoint, reply.status, True, frames)
    try:
        body: Any = json.loads(reply.body)
    except ValueError:
        body = reply.body.decode()
    return cut(exchange.endpoint, reply.status, exchange.stream, body)


def recorded(golden: GoldenFile, index: int) -> tuple[int, str]:
    exchange = golden.exchanges[index]
    payload = exchange.frames if exchange.frames is not None else exchange.body
    return cut(exchange.endpoint, exchange.status, exchange.frames is not None, payload)


def _reasons(case: str, ident: str) -> list[str]:
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
def test_ollama_profile_answers_as_ollama_v0_33_0_rc2(
    g: int, e: int, record_property: Callable[[str, object], None]
) -> None:
    """Same status, and the same messages, done reasons, choices and errors, line by line."""
    golden = goldens()[g]
    want = recorded(golden, e)
    got = mockoss_answer(golden, e)
    known = _reasons(golden.case, golden.exchanges[e].id)
    result = "identical" if got == want else "known" if known else "different"
    record_property("golden", {"directory": DIRECTORY.name, result: 1})  # conftest.py's summary
    assert got[0] == want[0]
    assert got[1].splitlines() == want[1].splitlines(), f"Ollama fb3076099:\n{want[1]}\nmockoss:\n{got[1]}"


def test_goldens_cover_every_case_and_its_chat_requests() -> None:
    """Every case has a golden recorded for its current tokens and chat request bodies."""
    recorded_cases = {golden.case: golden for golden in goldens()}
    stale = []
    for case in all_cases():
        golden = recorded_cases.pop(case.id, None)
        if golden is None:
            stale.append(f"{case.id}: no golden")
            continue
        if golden.completion.get("tokens") != list(case.completion.tokens):
            stale.append(f"{case.id}: the completion changed")
        chat = [(x.id, x.request) for x in exchanges(case) if x.endpoint == CHAT]
        if [(x.id, x.request) for x in golden.exchanges][: len(chat)] != chat:
            stale.append(f"{case.id}: the chat exchanges or request bodies changed")
    stale.extend(f"{name}: no such case any more" for name in recorded_cases)
    assert not stale, f"{DIRECTORY.name} is stale; {REGENERATE}:\n" + "\n".join(stale)


def test_header_names_the_source_and_the_profile() -> None:
    header = goldens()[0].header
    assert (header["server"], header["version"], header["level"], header["profile"]) == (
        "ollama",
        "0.33.0-rc2",
        "chat-handler",
        "ollama",
    )
    assert "fb3076099" in header["source"]
