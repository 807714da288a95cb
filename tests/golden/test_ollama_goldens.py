"""The ``ollama`` profile against Ollama v0.33.0-rc2's own Go code (goldens, no Go needed).

``tests/golden/ollama-0.33.0-rc2/`` holds, per case of :mod:`mockoss.golden.cases`, what Ollama's
packages at ollama/ollama@fb3076099 (``model/parsers`` → ``harmony.HarmonyMessageHandler``, ``api``,
``openai``) made of the case's tokens, as llama-server would stream them to Ollama's runner, with
the glue of ``server/routes.go`` (``ChatHandler``'s callback, ``writeChatResponse``,
``streamResponse``), ``llm/llama_server.go`` and ``middleware/openai.go`` restated in
``tools/goldens/ollama_harness.go``. Recorded by ``tools/goldens/ollama_0_33_0_rc2.py`` (build:
``tools/goldens/ollama_build.sh``; both docstrings give the commands). Exchanges (32 per case):
the case list's ``/v1/chat/completions`` and ``/v1/responses`` requests, six ``/api/chat`` ones,
prefills, renamed tools and ``include_usage`` (the generator's ``EXTRA``), and five
``/api/generate`` ones (parsed and ``raw``).

Compared: the status and the whole body, or every NDJSON line / SSE frame, as parsed JSON re-dumped
(key order included; not the bytes: string escaping, frame separators and headers are the
profile's own tests', e.g. tests/profiles/test_ollama_gojson.py).
Not compared: clock readings (``created_at``, durations: the harness's fixed clock), kept as keys;
ids compare by prefix, shape where it is not a random draw, and reuse
(:mod:`mockoss.golden.normalise`). ``eval_count``/``completion_tokens``/``output_tokens`` are
compared (llama-server's ``predicted_n``, which the generator supplies: the harness's Go code copies
it), and so are the prompt counts (``prompt_eval_count``, ``prompt_tokens``, ``input_tokens``, the
totals) and ``/api/generate``'s ``context`` ids: the generator has the harness render each request's
prompt with Ollama's own template package and the gpt-oss model's Go template, then tokenizes it
as llama-server does (o200k_harmony, special tokens parsed; its docstring cites the lines). mockoss
ports that rendering (:mod:`mockoss.profiles.ollama.render`). Before, it rendered openai-harmony's
prompt instead and these fields were masked: the same 82 tokens for the plain requests, but 987
of the 2,176 exchanges (those declaring tools) counted otherwise (Ollama's template indents
``  location: string,`` and writes JSON Schema type names, ``cmd: array``, where openai-harmony
writes ``cmd: Array<any>``).

Where mockoss differs, the exchange is an expected failure (strict) listed in :data:`DIFFERENCES`
with the Go line responsible: none now. Fixed from what these goldens showed: 80 of the 1496
chat exchanges differed in ``eval_count``/``completion_tokens`` (the five cases whose script has
no end token, where the generator, like mockoss's scripted vLLM engine, has the engine emit the
``<|endoftext|>`` that ends them: a modelling choice of mockoss's, not something Ollama's code
decided; commit eca8c24, :func:`mockoss.profiles.ollama.generation.engine_completion`); 8 of the 340 Responses exchanges
differed in the stream (``output: null`` when no item was produced, ``openai/responses.go:1536``;
a new ``rs_`` id per reasoning item, :1242-1244).
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

from mockoss.golden.cases import CHAT, MODEL, RESPONSES, all_cases, exchanges
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
NATIVE_GENERATE = "/api/generate"

#: (case glob, exchange glob) → why mockoss differs from Ollama fb3076099 (path:line) and where in
#: mockoss. Each matching exchange is a strict expected failure.
DIFFERENCES: dict[tuple[str, str], str] = {}


@cache
def goldens() -> tuple[GoldenFile, ...]:
    return tuple(read_golden_dir(DIRECTORY))


@cache
def server() -> MockServer:
    return MockServer(profile="ollama", served_model_names=[MODEL], request_log_limit=1)


#: Clock readings (the harness's fixed values): compared as keys only, at any depth; the token
#: counts (prompt and output) and ``context`` are compared. Numeric
#: ``created``/``created_at``/``completed_at`` are ``<TIME>`` already (:mod:`mockoss.golden.normalise`).
_MASKED = frozenset({"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"})
#: ``chatcmpl-%d`` of ``rand.Intn(999)`` (middleware/openai.go:478), raw or as the golden store
#: normalised it (``<chatcmpl-:270#1>``: too short for a shape, the number stays).
_CHATCMPL = re.compile(r"chatcmpl-\d{1,3}|<chatcmpl-:\d{1,3}#\d+>")
#: Ids of random digits or characters whose shape varies with the draw: ``call_`` + 8 of
#: ``[a-z0-9]`` (server/routes.go:2305-2312; all hex now and then), ``resp_%d``/``msg_%d`` of
#: ``rand.Intn(999999)`` (middleware/openai.go:1194-1195). Compared by prefix and reuse only.
_DRAWN = re.compile(r"<(call_|resp_|msg_|rs_|fc_):[^#>]*#")


def _mask(value: Any, key: str | None = None) -> Any:
    if key in _MASKED and value is not None:
        return "<N>"
    if isinstance(value, dict):
        return {k: _mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if key == "created_at" and isinstance(value, str):  # /api/chat's RFC 3339 stamp
        return "<TIME>"
    if key == "id" and isinstance(value, str) and _CHATCMPL.fullmatch(value):
        return "chatcmpl-<n>"
    return value


def _text(normaliser: Normaliser, item: Any) -> str:
    return _DRAWN.sub(r"<\1#", dumps(_mask(normaliser.json(item))))


def cut(endpoint: str, status: int, stream: bool, payload: Any) -> tuple[int, str]:
    """(status, the compared part as text). ``payload``: a parsed body, or a stream's frames/lines."""
    normaliser = Normaliser()
    if not stream or status != 200:
        return status, _text(normaliser, payload)
    out = []
    for frame in payload:
        if endpoint in (NATIVE_CHAT, NATIVE_GENERATE):
            out.append(_text(normaliser, json.loads(frame)))
            continue
        for line in frame.splitlines():
            if line.startswith("data:") and line.strip() != "data: [DONE]":
                out.append("data: " + _text(normaliser, json.loads(line[5:])))
            else:
                out.append(line.strip())
    return status, "\n".join(out)


def mockoss_answer(golden: GoldenFile, index: int) -> tuple[int, str]:
    """mockoss's cut answer to the golden's ``index``-th exchange, from the same completion."""
    exchange = golden.exchanges[index]
    completion = Completion(text=golden.completion["text"], tokens=tuple(golden.completion["tokens"]))
    endpoint = {CHAT: "chat", RESPONSES: "responses", NATIVE_GENERATE: "ollama.generate"}.get(
        exchange.endpoint, "ollama.chat"
    )
    reply, _ = server().respond(
        endpoint, json.dumps(exchange.request).encode(), {}, step=Step(index=0, completion=completion, error=None)
    )
    if reply.streamed and reply.status == 200:
        text = b"".join(f if isinstance(f, bytes) else f.encode() for f in reply.frames).decode()
        native = exchange.endpoint in (NATIVE_CHAT, NATIVE_GENERATE)
        frames = [x for x in text.split("\n") if x] if native else split_sse(text)
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


@pytest.mark.parametrize("g", range(len(goldens())), ids=[golden.case for golden in goldens()])
def test_ollama_profile_answers_as_ollama_v0_33_0_rc2(g: int, record_property: Callable[[str, object], None]) -> None:
    """Every exchange of the case: same status, and the same body or lines/frames, one by one. An
    exchange named in :data:`DIFFERENCES` must differ (strict). One test per case, not per exchange:
    per-exchange parameters (2,176) doubled the run time."""
    golden = goldens()[g]
    tally = {"identical": 0, "known": 0, "different": 0}
    problems = []
    for e, exchange in enumerate(golden.exchanges):
        want, got = recorded(golden, e), mockoss_answer(golden, e)
        reasons = _reasons(golden.case, exchange.id)
        if got == want:
            tally["identical"] += 1
            if reasons:
                problems.append(f"{exchange.id}: matches now; drop DIFFERENCES entry {reasons}")
        elif reasons:
            tally["known"] += 1
        else:
            tally["different"] += 1
            problems.append(f"{exchange.id}:\nOllama fb3076099: {want[0]}\n{want[1]}\nmockoss: {got[0]}\n{got[1]}")
    record_property("golden", {"directory": DIRECTORY.name, **tally})  # conftest.py's summary
    assert not problems, f"{len(problems)} of {len(golden.exchanges)} exchanges:\n" + "\n\n".join(problems)


def test_goldens_cover_every_case_and_its_requests() -> None:
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
        listed = [(x.id, x.request) for x in exchanges(case)]
        if [(x.id, x.request) for x in golden.exchanges][: len(listed)] != listed:
            stale.append(f"{case.id}: the exchanges or request bodies changed")
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
