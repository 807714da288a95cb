#!/usr/bin/env python
"""Goldens from SGLang 0.5.23's own serving code, in process, with the engine replaced by a script.

Level ``serving-code``, as ``tools/goldens/vllm_serving_code.py`` is for vLLM. Everything between
the HTTP request and the engine is SGLang's own code: its FastAPI app
(``sglang/srt/entrypoints/http_server.py``), request validation (``entrypoints/openai/protocol.py``),
``OpenAIServingChat`` (``entrypoints/openai/serving_chat.py``: message processing, tool-choice
constraints, the ``gpt-oss`` reasoning parser and tool-call detector, full and stream
generators), ``OpenAIServingResponses`` (``serving_responses.py``, openai-harmony 0.0.4 as the
wheel pins it), the chat template's loading (``TemplateManager``) and rendering
(``_apply_jinja_template``, with openai/gpt-oss-20b's own ``chat_template.jinja``),
``DetokenizerManager``'s incremental decoding and the scheduler's ``reasoning_tokens`` count.
What stands in (the engine, the tokenizer built offline, a ``torchvision`` stub) is listed in the
SGLang half, ``tools/goldens/sglang_serving_engine.py``,
which runs in SGLang's virtual environment: SGLang pins openai-harmony 0.0.4, mockoss runs
oss-harmony, and both install the module ``openai_harmony``, so this half (mockoss's venv: the
cases, the plan, the golden files) calls that one in a subprocess. All line references are to
sgl-project/sglang v0.5.23 as the package index's wheel installs it.

What this level does not cover: the sampler (``tool_choice: "required"``'s grammar does not act,
so those exchanges carry :data:`GRAMMAR_NOTE`), the real scheduler's chunking (one chunk per token
here: ``--stream-interval 1``) and uvicorn's framing of a stream that raises midway (recorded as
``note: connection dropped after frame N``).

The chat template is not in this repository (it is the model's, openai/gpt-oss-20b on Hugging
Face, ``chat_template.jinja`` of its commit "Updated chat template (#82)", 2025-08-07, sha256
``a4c9919c…8146``; llama.cpp ships the same file as ``models/templates/openai-gpt-oss-120b.jinja``):
pass its path with ``--chat-template``; the header records its name and sha256. The tokenizer is
:mod:`mockoss.engines.vllm.model_dir`'s (built once with ``transformers``; cached).

The SGLang venv (``/tmp/sgl17/venv`` in session 17, ~3.5 GB, ~6 min): ``pip install
torch==2.13.0`` (the local CPU wheel) first, ``pip install --no-deps sglang==0.5.23 triton
apache-tvm-ffi==0.1.11``, then ``numpy fastapi uvicorn orjson openai==2.8.0 openai-harmony==0.0.4
pydantic httpx transformers==5.19.0 tiktoken partial_json_parser pybase64 psutil pyzmq requests
aiohttp msgspec packaging regex setproctitle uvloop prometheus-client python-multipart pillow
xxhash einops dill IPython datasets sentencepiece compressed_tensors gguf jsonschema xgrammar
soundfile`` (check that none replaced the CPU torch; torchvision is stubbed, never installed)::

    .venv/bin/python tools/goldens/sglang_serving_code.py --sglang-python /tmp/sgl17/venv/bin/python \
        --chat-template chat_template.jinja [--out DIR] [--case GLOB]

It writes ``tests/golden/sglang-0.5.23/<case>.json`` through :mod:`mockoss.golden.store`.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mockoss.engines.vllm.model_dir import ensure_model_dir
from mockoss.golden.cases import Case, Exchange, all_cases
from mockoss.golden.normalise import split_sse
from mockoss.golden.sglang_cases import sglang_exchanges as exchanges
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden
from mockoss.harmony.encoding import vocabulary_dir

VERSION = "0.5.23"
GENERATOR = "tools/goldens/sglang_serving_code.py"
ENGINE = Path(__file__).with_name("sglang_serving_engine.py")
#: SGLang's server flags for gpt-oss (what the engine half configures).
SERVER_FLAGS = [
    "--served-model-name",
    "openai/gpt-oss-20b",
    "--reasoning-parser",
    "gpt-oss",
    "--tool-call-parser",
    "gpt-oss",
]
COVERS = (
    "every exchange kind of mockoss.golden.cases, chat and Responses, streamed and not, tools or not, "
    "tool_choice none/required, max_tokens/max_output_tokens, include_reasoning, reasoning_effort; "
    "and mockoss.golden.sglang_cases' SGLang-only ones: stream_options include_usage/continuous_usage_stats, "
    "streamed limits and tool_choice required, a named tool_choice, separate_reasoning and stream_reasoning false; "
    "through SGLang's FastAPI app in process (routers, validation, OpenAIServingChat/Responses, "
    "gpt-oss reasoning and tool-call parsers, DetokenizerManager decoding, the scheduler's "
    "reasoning_tokens count, the model's chat template loaded and rendered); engine scripted, one token "
    "per chunk; no sampler (grammars not enforced)"
)
#: The note on exchanges whose request makes SGLang build a tool-call grammar.
GRAMMAR_NOTE = (
    "level artefact: SGLang constrains this request with a tool-call grammar "
    "(sglang/srt/entrypoints/openai/serving_chat.py: _process_messages, tool_call_constraint for "
    "tool_choice 'required' or a named function), which acts in the sampler; this level has no sampler, "
    "so the scripted tokens pass unconstrained"
)


def grammar_note(request: dict[str, Any]) -> str | None:
    """:data:`GRAMMAR_NOTE` for a request that sets a tool-call grammar, else ``None``."""
    choice = request.get("tool_choice")
    if request.get("tools") and (choice == "required" or isinstance(choice, dict)):
        return GRAMMAR_NOTE
    return None


def plan_entry(case: Case, exchange: Exchange) -> dict[str, Any]:
    """What the engine half needs for one exchange: path, body, the emitted tokens.

    The tokens are the case's completion cut by the request's ``max_tokens`` /
    ``max_output_tokens`` as an engine's limit cuts it (:meth:`mockoss.harmony.Completion.emit`).
    """
    body = exchange.request
    emission = case.completion.emit(body.get("max_tokens", body.get("max_output_tokens")))
    entry: dict[str, Any] = {
        "path": exchange.endpoint,
        "body": body,
        "tokens": list(emission.tokens),
        "length": emission.finish_reason == "length",
    }
    return entry


def record(exchange: Exchange, result: dict[str, Any]) -> GoldenExchange:
    """One engine-half result as a normalised golden exchange."""
    note = grammar_note(exchange.request)
    status, raw = result["status"], result["body"]
    if exchange.stream and status == 200 and "text/event-stream" in (result.get("content_type") or ""):
        frames = split_sse(raw)
        if result.get("abort"):
            note = f"connection dropped after frame {len(frames)} ({result['abort']})" + (f"; {note}" if note else "")
        return record_exchange(exchange, status, frames=frames, note=note)
    return record_exchange(exchange, status, body=raw, note=note)


def run(python: str, out: Path, pattern: str, chat_template: Path) -> int:
    cases = [case for case in all_cases() if fnmatch.fnmatchcase(case.id, pattern)]
    pairs = [(case, exchange) for case in cases for exchange in exchanges(case)]
    started = time.monotonic()
    env = {
        **os.environ,
        "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir()),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "SGLANG_LOGGING_LEVEL": "WARNING",
    }
    with tempfile.TemporaryDirectory() as tmp:
        plan, results = Path(tmp, "plan.json"), Path(tmp, "out.json")
        cases_plan = [plan_entry(case, exchange) for case, exchange in pairs]
        config = {"tokenizer_dir": str(ensure_model_dir()), "chat_template": str(chat_template.resolve())}
        plan.write_text(json.dumps({**config, "cases": cases_plan}), encoding="utf-8")
        done = subprocess.run(
            [python, str(ENGINE), str(plan), str(results)], env=env, capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise SystemExit(f"{ENGINE.name} failed ({done.returncode}):\n{done.stderr[-4000:]}")
        answers = iter(json.loads(results.read_text(encoding="utf-8")))
    version = subprocess.run(
        [
            python,
            "-c",
            "from importlib.metadata import version as v; print(v('sglang'), v('openai-harmony'), v('openai'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if version[0] != VERSION:
        raise SystemExit(f"{python} has sglang {version[0]}, not {VERSION}")
    header = {
        "server": "sglang",
        "version": VERSION,
        "harmony_library": f"openai-harmony {version[1]}",
        "level": "serving-code",
        "generator": GENERATOR,
        "source": f"sgl-project/sglang v{VERSION}, package index wheel (openai {version[2]}); engine scripted "
        "(tools/goldens/sglang_serving_engine.py)",
        "covers": COVERS,
        "server_flags": SERVER_FLAGS,
        "chat_template": f"{chat_template.name} sha256:{hashlib.sha256(chat_template.read_bytes()).hexdigest()}",
        # The model's own chat template: a tool without a description is refused.
        "profile": {"name": "sglang", "switches": {"tool_description_required": True}},
    }
    for number, case in enumerate(cases, 1):
        recorded = [record(exchange, next(answers)) for exchange in exchanges(case)]
        path = write_golden(out, header, case, recorded)
        print(f"[{number}/{len(cases)}] {path.name}: {','.join(str(r.status) for r in recorded)}", flush=True)
    print(f"{len(cases)} cases, {len(pairs)} exchanges in {time.monotonic() - started:.1f} s -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sglang-python", required=True, help="the interpreter of a venv holding sglang 0.5.23")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden" / f"sglang-{VERSION}")
    parser.add_argument("--case", default="*", help="only cases whose id matches this glob")
    parser.add_argument(
        "--chat-template", type=Path, required=True, help="the gpt-oss model's chat template (see the docstring)"
    )
    options = parser.parse_args(argv)
    return run(options.sglang_python, options.out, options.case, options.chat_template)


if __name__ == "__main__":
    sys.exit(main())
