#!/usr/bin/env python
"""Goldens from the gpt-oss reference Responses server (``gpt_oss.responses_api``) with a scripted backend.

Level ``http-server``: the server is openai/gpt-oss's own code (``create_api_server`` of
openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py, its FastAPI app, its pydantic types,
openai-harmony 0.0.8's ``StreamableParser`` and ``parse_messages_from_completion_tokens``) served
by uvicorn on loopback in its own process (``tools/goldens/gptoss_reference_server.py``, run by
the Python given as ``--server-python``); only the inference backend is scripted: it returns the
token ids of each case's completion (:mod:`mockoss.golden.cases`), then ``<|return|>``.

Every case is asked the Responses exchanges of :func:`mockoss.golden.cases.exchanges` (the
reference server has no chat endpoint) plus this server's options that change the answer and,
for one case, request variants (:func:`reference_exchanges`). Answers are stored through :mod:`mockoss.golden.store` (normalised there) in
``tests/golden/gptoss-reference-<version>/``. A stream that breaks is stored as far as it came,
with ``note: connection dropped after frame N``.

Run it from the main venv (mockoss importable)::

    python tools/goldens/gptoss_reference.py --server-python /work/gptoss-venv/bin/python \\
        --source /work/gptoss-venv/src [--case GLOB]

``--source`` is a checkout of openai/gpt-oss (the ``gpt_oss`` package and nothing built).
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from mockoss.golden.cases import MODEL, RESPONSES, USER_MESSAGE, Case, Exchange, all_cases, cut_point, exchanges  # noqa: E402
from mockoss.golden.normalise import split_sse  # noqa: E402
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden  # noqa: E402
from mockoss.harmony.encoding import vocabulary_dir  # noqa: E402

GENERATOR = "tools/goldens/gptoss_reference.py"
#: The gpt-oss commit and package version the goldens were recorded from.
COMMIT = "7b583341fe16729127f6d5b94a7b09ccae97e1a1"
VERSION = "0.0.9"
HARMONY = "openai-harmony 0.0.8"


def _body(case: Case, *, tools: bool, stream: bool, **options: Any) -> dict[str, Any]:
    """A Responses body as :mod:`mockoss.golden.cases` builds them (model, the user turn, the case's tools)."""
    body: dict[str, Any] = {"model": MODEL, "input": USER_MESSAGE}
    if tools:
        body["tools"] = [e for e in exchanges(case) if e.id == "responses-nostream-tools"][0].request["tools"]
    body.update(options)
    if stream:
        body["stream"] = True
    return body


#: The case the request variants are asked with: an analysis message, then a final answer.
VARIANT_CASE = "scenario-clean-tool-call-1"
_TOOLS = [{"type": "function", "name": "get_weather", "description": "Current weather for a location.",
           "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}]
_CALL = {"type": "function_call", "name": "get_weather", "arguments": '{"location":"Paris"}', "call_id": "call_1"}
_OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": '{"sky":"sunny"}'}
_USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": USER_MESSAGE}]}
_REASONING = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Call get_weather."}]}
_ASSISTANT = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]}

#: Request shapes the reference server treats in its own way: (exchange id, stream, body).
VARIANTS: tuple[tuple[str, bool, dict[str, Any]], ...] = (
    ("variant-input-items", False, {"model": MODEL, "input": [_USER, _CALL, _OUTPUT], "tools": _TOOLS}),
    ("variant-input-reasoning-after-assistant", False, {"model": MODEL, "input": [_USER, _ASSISTANT, _REASONING, _CALL, _OUTPUT], "tools": _TOOLS}),
    ("variant-input-system-and-text-content", False,
     {"model": MODEL, "input": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": USER_MESSAGE}]}),
    ("variant-unknown-call-id", False, {"model": MODEL, "input": [_USER, {**_OUTPUT, "call_id": "call_x"}], "tools": _TOOLS}),
    ("variant-unknown-call-id-stream", True, {"model": MODEL, "input": [_USER, {**_OUTPUT, "call_id": "call_x"}], "stream": True}),
    ("variant-reasoning-null", False, {"model": MODEL, "input": USER_MESSAGE, "reasoning": None}),
    ("variant-effort-minimal", False, {"model": MODEL, "input": USER_MESSAGE, "reasoning": {"effort": "minimal"}}),
    ("variant-no-input", False, {"model": MODEL}),
    ("variant-max-tokens-null", False, {"model": MODEL, "input": USER_MESSAGE, "max_output_tokens": None}),
    ("variant-max-tokens-null-stream", True, {"model": MODEL, "input": USER_MESSAGE, "max_output_tokens": None, "stream": True}),
    ("variant-browser-tool", False, {"model": MODEL, "input": USER_MESSAGE, "tools": [{"type": "browser_search"}]}),
    ("variant-previous-response-id", False, {"model": MODEL, "input": USER_MESSAGE, "previous_response_id": "resp_0123456789abcdef0123456789abcdef"}),
    ("variant-other-model", False, {"model": "my-gpt-oss", "input": USER_MESSAGE}),
)


def reference_exchanges(case: Case) -> tuple[Exchange, ...]:
    """The exchanges each case is asked: the Responses ones of the shared case list, then the
    options below, and for :data:`VARIANT_CASE` the :data:`VARIANTS`.

    The options are those of the reference server's ``ResponsesRequest``
    (gpt_oss/responses_api/types.py) that change the answer: ``tool_choice`` (only ``auto`` and
    ``none`` validate: ``required`` is a 422), ``reasoning.effort`` (the system message, hence
    ``input_tokens``), ``instructions`` (a developer message), a token limit on a stream, and
    ``metadata.__debug`` (a parse error becomes the response's ``error`` instead of a 500, and the
    decoded prompt and output are in ``metadata``; the prompt holds the day's date, which the
    header's ``conversation_start_date`` switch carries).
    """
    shared = [e for e in exchanges(case) if e.endpoint == RESPONSES]
    limit = cut_point(case)
    extra = [
        ("responses-nostream-tools-choice-none", False, _body(case, tools=True, stream=False, tool_choice="none")),
        ("responses-nostream-tools-choice-required", False, _body(case, tools=True, stream=False, tool_choice="required")),
        ("responses-nostream-notools-effort-high", False, _body(case, tools=False, stream=False, reasoning={"effort": "high"})),
        ("responses-nostream-notools-instructions", False, _body(case, tools=False, stream=False, instructions="Answer briefly.")),
        ("responses-stream-tools-max-tokens", True, _body(case, tools=True, stream=True, max_output_tokens=limit)),
        ("responses-nostream-notools-debug", False, _body(case, tools=False, stream=False, metadata={"__debug": True})),
    ]
    if case.id == VARIANT_CASE:
        extra += VARIANTS
    return (*shared, *(Exchange(ident, RESPONSES, stream, body) for ident, stream, body in extra))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ask(client: httpx.Client, exchange: Exchange) -> GoldenExchange:
    if not exchange.stream:
        r = client.post(exchange.endpoint, json=exchange.request)
        return record_exchange(exchange, r.status_code, body=r.content)
    received = b""
    note = None
    with client.stream("POST", exchange.endpoint, json=exchange.request) as r:
        if r.status_code != 200 or not r.headers.get("content-type", "").startswith("text/event-stream"):
            return record_exchange(exchange, r.status_code, body=r.read())
        try:
            for chunk in r.iter_raw():
                received += chunk
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            note = f"connection dropped after frame {len(split_sse(received))} ({type(exc).__name__})"
    return record_exchange(exchange, 200, frames=split_sse(received), note=note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True, help="a Python where gpt_oss.responses_api imports")
    parser.add_argument("--source", required=True, type=Path, help="openai/gpt-oss checkout (PYTHONPATH)")
    parser.add_argument("--version", default=VERSION, help="the gpt-oss release --source is (its tag without v)")
    parser.add_argument("--commit", default=COMMIT, help="the commit --source is")
    parser.add_argument("--harmony", default=HARMONY, help="the Harmony library --server-python has (header)")
    parser.add_argument("--switch", action="append", default=[], metavar="NAME=VALUE",
                        help="a profile switch the header records (e.g. harmony_library=oss-harmony)")
    parser.add_argument("--out", type=Path, help="default: tests/golden/gptoss-reference-<version>")
    parser.add_argument("--case", default="*")
    args = parser.parse_args()
    out = args.out or ROOT / "tests" / "golden" / f"gptoss-reference-{args.version}"
    # The newest release is the bare profile; an older one is the profile at that release.
    profile = "gptoss-reference" if args.version == VERSION else f"gptoss-reference@{args.version}"

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text("[]")
        # openai-harmony reads o200k_base from TIKTOKEN_ENCODINGS_BASE (else it downloads it).
        env = {**os.environ, "PYTHONPATH": str(args.source), "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir())}
        log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115 (closed with the directory)
        server = subprocess.Popen(
            [args.server_python, str(ROOT / "tools/goldens/gptoss_reference_server.py"), "--port", str(port), "--script", str(script)],
            env=env, stdout=subprocess.DEVNULL, stderr=log,
        )
        try:
            # The server closes the connection after an unhandled exception: one connection per request.
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60, limits=httpx.Limits(max_keepalive_connections=0))
            for _ in range(200):
                try:
                    client.get("/")
                    break
                except httpx.TransportError:
                    if server.poll() is not None:
                        raise SystemExit(f"the reference server exited: {(Path(tmp) / 'server.log').read_text()[-2000:]}") from None
                    time.sleep(0.1)
            today = datetime.date.today().isoformat()  # the server's system message date (its __debug fields show it)
            header = {
                "server": "gptoss-reference",
                "version": args.version,
                "harmony_library": args.harmony,
                "level": "http-server",
                "generator": GENERATOR,
                "profile": {"name": profile, "switches": {"conversation_start_date": today, **dict(kv.split("=", 1) for kv in args.switch)}},
                "source": f"openai/gpt-oss@{args.commit}:gpt_oss/responses_api (uvicorn, scripted infer_next_token, then <|return|>)",
            }
            count = 0
            for case in all_cases():
                if not fnmatch.fnmatchcase(case.id, args.case):
                    continue
                recorded = []
                for exchange in reference_exchanges(case):
                    script.write_text(json.dumps(list(case.completion.tokens)))
                    recorded.append(_ask(client, exchange))
                write_golden(out, header, case, recorded)
                count += 1
            print(f"{count} cases written to {out}")
        except httpx.TransportError:
            sys.stderr.write((Path(tmp) / "server.log").read_text()[-3000:])
            raise
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
