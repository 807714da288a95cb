"""Differential check: the ``vllm-mlx`` profile against vllm-mlx's own server and parsers.

Usage: ``python tools/vllm_mlx_diff.py WHEEL_DIR STUB_DIR [SEEDED] [--record FILE]``: ``WHEEL_DIR`` holds ``vllm_mlx/``
from ``pip download --no-deps vllm-mlx==0.6.0`` (unzipped), ``STUB_DIR`` a ``transformers`` stub
package (as for ``tools/mlxlm_diff.py``). Needs a scratch venv with ``mlx[cpu]``, ``mlx-lm==0.31.3
--no-deps``, fastapi, uvicorn, pydantic, httpx, jsonschema, regex, numpy, pyyaml, jinja2, requests,
huggingface_hub, and *without* openai-harmony (mockoss's oss-harmony comes from its own venv)::

    /work/vllmmlx-venv/bin/python -c "import site, sys, runpy; site.addsitedir('.venv/lib/python3.11/site-packages'); \\
        sys.argv = ['x', '/tmp/vmlx/w/0.6.0', '/tmp/vmlx/stubs']; runpy.run_path('tools/vllm_mlx_diff.py', run_name='__main__')"

What runs as vllm-mlx's own code: ``server.app`` (FastAPI, in process through httpx's ASGI
transport) with ``create_chat_completion``, ``stream_chat_completion``, ``create_completion``,
``stream_completion``, ``create_response`` (both paths), its reasoning parsers
(``gpt_oss``, ``harmony``), ``HarmonyToolParser``, ``clean_output_text``, ``/health``,
``/v1/models`` and the model check; mlx-lm 0.31.3's ``BPEStreamingDetokenizer`` over gpt-oss's
byte-level token map. What stands in: the engine, replaying the scripted tokens as
``SimpleEngine`` + ``MLXLanguageModel`` + ``mlx_lm.stream_generate`` do (read from the source).

For every completion of the built-in scenarios and ``SEEDED`` (default 300) seeded token sequences,
under three configurations (``gpt_oss`` + ``harmony``, ``harmony`` + ``harmony``, no parsers), it
asks the chat route and ``/v1/responses`` without a tool, with one and with one and ``tool_choice:
"none"`` (with tools but no tool parser only unstreamed: the generic streaming parser is not
emulated) and ``/v1/completions``,
with no limit and a 9-token limit, streamed (chat with ``include_usage``) and not, and compares the bytes (ids and
``created`` values normalised); then ``/health``, ``/v1/models``, an unknown route, a wrong method
and the model check. Prints the
counts and the first differences; exit status 1 when any differ. ``--record FILE`` also writes the
server's replies for the built-in scenarios (two configurations) as the goldens CI replays without
this venv: ``... /tmp/vmlx/w/0.6.0 /tmp/vmlx/stubs 0 --record tests/golden/vllm-mlx-0.6.0/replies.jsonl.gz``. Not imported by mockoss or its tests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

PROMPT_TOKENS = 37
#: ``--record FILE``: also write (gzipped JSON lines) the server's replies for the built-in
#: scenarios' completions under these configurations: the goldens
#: ``tests/golden/test_vllm_mlx_goldens.py`` replays (``tests/golden/vllm-mlx-<release>/replies.jsonl.gz``).
RECORD: str | None = None
RECORD_CONFIGS = (("gpt_oss", "harmony"), (None, None))
MODEL = "mlx-community/gpt-oss-20b-MXFP4-Q8"
EOS = (200002, 199999, 200012)
CONFIGS = (("gpt_oss", "harmony"), ("harmony", "harmony"), (None, None))
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
_ID = re.compile(rb'"((chatcmpl|call|cmpl)[_-][0-9a-f]{8}|(resp|rs|msg|fc)_[0-9a-f]{32})"')
_CREATED = re.compile(rb'("created(?:_at)?": ?)\d+')


def _norm(raw: bytes) -> bytes:
    return _CREATED.sub(rb"\g<1>0", _ID.sub(b'"ID"', raw))


def _engine(server_mod, base, clean, detok, tokens: list[int]):
    """An engine with SimpleEngine's surface for gpt-oss text: ``stream_chat`` per mlx-lm response
    (one per token, one for the flush, one ``finished`` after an EOS) and ``chat`` (aggregated
    stream with tools; ``MLXLanguageModel.generate`` without), both as vllm-mlx builds them."""
    from mockoss.harmony.encoding import load_encoding

    class Engine:
        model_name, is_mllm, use_harmony_rendering, tokenizer, _tokenizer = MODEL, False, False, None, None
        preserve_native_tool_format = False

        def get_stats(self):
            return {"engine_type": "simple"}

        def _segments(self, limit):
            detok.reset()
            for n, token in enumerate(tokens):
                if token in EOS:
                    break
                detok.add_token(token)
                if n + 1 == limit:
                    break
                yield detok.last_segment
            detok.finalize()
            yield detok.last_segment

        async def stream_chat(self, messages, max_tokens=32768, **kwargs):
            acc, count, finished = "", 0, False
            for seg in self._segments(max_tokens):
                count += 1
                acc += seg
                finished = count >= max_tokens
                yield base.GenerationOutput(text=acc, new_text=seg, prompt_tokens=PROMPT_TOKENS, completion_tokens=count, finished=finished, finish_reason="length" if finished else None)
                if finished:
                    return
            yield base.GenerationOutput(text=acc, new_text="", prompt_tokens=PROMPT_TOKENS, completion_tokens=count, finished=True, finish_reason="stop")

        async def stream_generate(self, prompt, max_tokens=32768, **kwargs):
            async for output in self.stream_chat([], max_tokens=max_tokens):
                yield output

        async def generate(self, prompt, max_tokens=32768, **kwargs):  # SimpleEngine.generate
            last = base.GenerationOutput(text="")
            async for last in self.stream_chat([], max_tokens=max_tokens):
                pass
            return base.GenerationOutput(text=clean(last.text), prompt_tokens=last.prompt_tokens, completion_tokens=last.completion_tokens, finish_reason=last.finish_reason, finished=True)

        async def chat(self, messages, max_tokens=32768, tools=None, **kwargs):
            if tools:
                last = base.GenerationOutput(text="")
                async for last in self.stream_chat(messages, max_tokens=max_tokens):
                    pass
                return base.GenerationOutput(text=clean(last.text), prompt_tokens=PROMPT_TOKENS, completion_tokens=last.completion_tokens, finish_reason=last.finish_reason)
            text = "".join(self._segments(max_tokens))
            ids = load_encoding().encode(text, allowed_special="all")
            return base.GenerationOutput(text=clean(text), tokens=ids, prompt_tokens=PROMPT_TOKENS, completion_tokens=len(ids), finish_reason="length" if len(ids) >= max_tokens else "stop")

    return Engine()


class _Seeded:
    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens

    def emit(self, limit=None):
        from types import SimpleNamespace

        out: list[int] = []
        for token in self.tokens:
            if limit is not None and len(out) == limit:
                return SimpleNamespace(tokens=tuple(out), finish_reason="length")
            out.append(token)
            if token in (200002, 200012):
                break
        return SimpleNamespace(tokens=tuple(out), finish_reason="stop")


def _seeded(count: int) -> list[tuple[str, Any]]:
    """Harmony-shaped token soups: headers, channels, recipients, JSON pieces, stop tokens."""
    from mockoss.harmony.encoding import load_encoding

    enc = load_encoding()
    pieces = ["<|channel|>", "analysis", "final", "commentary", " to=functions.get_weather", " to=functions.x", "<|message|>", "<|end|>",
              "<|start|>", "assistant", "<|constrain|>", "json", '{"city":"Paris"}', '{"a":', "1}", " hi", " there.", "\n", " ", "é",
              "<|call|>", "<|return|>", "[", "x(", "{", "Done", "<|endoftext|>",
              '{"name":"get_weather","arguments":{"city":"Oslo"}}', '{"name":"f","arguments":"x"}']
    rng = random.Random(7)
    out = []
    for i in range(count):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 18)))
        out.append((f"seeded-{i}", _Seeded(enc.encode(text, allowed_special="all"))))
    return out


def _ours(profile, completion, body, index) -> bytes:
    from mockoss.endpoints import ENDPOINTS
    from mockoss.profiles.base import IdSource, RequestContext

    ctx = RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=PROMPT_TOKENS)
    kind = "responses" if "input" in body else "completions" if "prompt" in body else "chat"
    view = ENDPOINTS[kind].schema.model_validate(body).view(body["model"], body)  # the server's own request path
    reply = profile.chat(completion, view, ctx) if kind == "chat" else profile.surface(kind, completion, view, ctx)
    return reply.body if not reply.streamed else b"".join(reply.frames)


async def _run(seeded: int) -> int:
    import httpx
    from mlx_lm import tokenizer_utils as tu
    from vllm_mlx import server
    from vllm_mlx.api.utils import clean_output_text
    from vllm_mlx.engine import base
    from vllm_mlx.reasoning import get_parser

    from mockoss.profiles.base import ServerInfo
    from mockoss.profiles.mlxlm.detokenizer import token_strings
    from mockoss.profiles.registry import get_profile
    from mockoss.scenario.loader import builtin_names, load_named

    class Tok:
        clean_up_tokenization_spaces = False

        def __init__(self):
            self.vocab = {t: i for i, t in enumerate(token_strings())}

    detok = tu.BPEStreamingDetokenizer(Tok())
    release = next(Path(sys.argv[1]).glob("vllm_mlx-*.dist-info")).name.removesuffix(".dist-info").split("-")[1]
    server._model_name = MODEL
    cases = [(f"{name}#{i}", step.completion) for name in builtin_names() for i, step in enumerate(load_named(name).steps) if step.completion is not None]
    cases += _seeded(seeded)
    record = []
    compared, diffs = 0, []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app), base_url="http://mlx") as client:
        for reasoning, tools in CONFIGS:
            server._reasoning_parser = get_parser(reasoning)() if reasoning else None
            server._enable_auto_tool_choice, server._tool_call_parser, server._tool_parser_instance = bool(tools), tools, None
            profile = dataclasses.replace(get_profile(f"vllm-mlx@{release}"), reasoning_parser=reasoning, tool_call_parser=tools)
            for name, completion in cases:
                for limit in (None, 9):
                    # "text": /v1/completions; "responses": /v1/responses
                    for with_tools in (False, True, "none", "text", "responses", "responses+tools", "responses+none"):
                        # no tool parser + tools, streamed: vllm-mlx's generic streaming parser (not emulated)
                        for stream in (False, True) if tools or with_tools not in (True, "responses+tools", "none", "responses+none") else (False,):
                            body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
                            if with_tools == "text":
                                body = {"model": MODEL, "prompt": "hi", "stream": stream}
                            elif str(with_tools).startswith("responses"):
                                body = {"model": MODEL, "input": "hi", "metadata": {"k": "v"}, "instructions": "Be brief.", "stream": stream}
                                if with_tools == "responses+none":
                                    body["tool_choice"] = "none"
                                if with_tools in ("responses+tools", "responses+none"):
                                    body["tools"] = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}, {"type": "web_search_preview"}]
                                if limit:
                                    body["max_output_tokens"] = limit
                            if with_tools in (True, "none"):
                                body["tools"] = TOOLS
                            if with_tools == "none":
                                body["tool_choice"] = "none"
                            if limit and "input" not in body:
                                body["max_tokens"] = limit
                            if stream and "messages" in body:
                                body["stream_options"] = {"include_usage": True}
                            emission = completion.emit(limit or 32768)
                            tokens = list(emission.tokens)
                            if emission.finish_reason == "stop" and not any(t in EOS for t in tokens) and len(tokens) < (limit or 32768):
                                tokens.append(200002)
                            server._engine = _engine(server, base, clean_output_text, detok, tokens)
                            path = "/v1/responses" if "input" in body else "/v1/completions" if "prompt" in body else "/v1/chat/completions"
                            theirs = _norm((await client.post(path, json=body)).content)
                            if RECORD and "#" in name and (reasoning, tools) in RECORD_CONFIGS:
                                record.append({"case": name, "tokens": list(completion.tokens), "reasoning_parser": reasoning,
                                               "tool_call_parser": tools, "body": body, "reply": theirs.decode()})
                            ours = _norm(_ours(profile, completion, body, compared))
                            compared += 1
                            if theirs != ours:
                                diffs.append((f"{reasoning}/{tools}", name, limit, with_tools, stream, theirs, ours))
        info = ServerInfo(served_model_names=(MODEL,), created=0)
        for method, path in (("GET", "/health"), ("GET", "/v1/models"), ("GET", "/v1/nothing"), ("POST", "/health")):
            compared += 1
            theirs_reply = await client.request(method, path)
            ours_reply = profile.probe(method, path, info) or profile.route_error(404 if method == "GET" else 405, method, path)
            if (theirs_reply.status_code, _norm(theirs_reply.content)) != (ours_reply.status, _norm(ours_reply.body)):
                diffs.append(("probe", method, path, theirs_reply.status_code, theirs_reply.content, ours_reply.status, ours_reply.body))
        compared += 1
        wrong = await client.post("/v1/chat/completions", json={"model": "other", "messages": [{"role": "user", "content": "hi"}]})
        ours_reply = profile.model_not_found("other")
        if (wrong.status_code, wrong.content) != (ours_reply.status, ours_reply.body):
            diffs.append(("model check", wrong.status_code, wrong.content, ours_reply.status, ours_reply.body))
    if RECORD:
        header = {"generator": "tools/vllm_mlx_diff.py --record", "server": f"vllm-mlx {release} (the wheel's server.app, scripted engine)",
                  "model": MODEL, "prompt_tokens": PROMPT_TOKENS, "normalised": "ids and created/created_at values"}
        lines = [json.dumps(header, ensure_ascii=False), *(json.dumps(r, ensure_ascii=False) for r in record)]
        # mtime 0 and no file name in the header: the same replies give the same bytes
        Path(RECORD).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
        print(f"recorded {len(record)} replies to {RECORD}")
    print(f"vllm-mlx {release}: {len(cases)} completions ({len(cases) - seeded} from the built-in scenarios, {seeded} seeded) x {len(CONFIGS)} parser configurations, {compared} replies compared byte for byte with vllm_mlx.server's app, {len(diffs)} differ")
    for diff in diffs[:6]:
        print(*diff[:5] if len(diff) == 7 else diff, sep="\n  ")
        theirs, ours = diff[-2:] if len(diff) == 7 else (b"", b"")
        start = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
        print("  first difference at byte", start, theirs[max(0, start - 80) : start + 120], ours[max(0, start - 80) : start + 120])
    return 1 if diffs else 0


def main() -> int:
    global RECORD
    if "--record" in sys.argv:
        at = sys.argv.index("--record")
        RECORD = sys.argv[at + 1]
        del sys.argv[at : at + 2]
    sys.path[:0] = [sys.argv[2], sys.argv[1]]
    import logging

    logging.disable(logging.WARNING)
    return asyncio.run(_run(int(sys.argv[3]) if len(sys.argv) > 3 else 300))


if __name__ == "__main__":
    sys.exit(main())
