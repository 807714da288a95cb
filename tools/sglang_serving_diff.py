"""Differential check: the ``sglang`` profile's ``/v1/responses`` and ``/v1/completions`` against
SGLang's own serving code, byte for byte.

Usage (mockoss's venv)::

    python tools/sglang_serving_diff.py SGLANG_SRC SGLANG_PYTHON [SEEDED] [--record GOLDEN.json]

``--record`` also writes SGLang's answers to the built-in scenarios' exchanges (not the seeded
ones), which ``tests/profiles/test_sglang_goldens.py`` replays through the profile in CI
(``tests/profiles/sglang-0.5.23.json``).

``SGLANG_SRC`` is the unzipped 0.5.23 wheel's directory (holding ``sglang/``), ``SGLANG_PYTHON`` the
interpreter of a scratch venv with SGLang's dependencies (``torch``, ``fastapi``, ``orjson``,
``openai==2.8.0`` and ``openai-harmony==0.0.4`` as the wheel pins them, …; ``TIKTOKEN_ENCODINGS_BASE``
pointing at a folder with ``o200k_base.tiktoken``). The SGLang half, ``tools/sglang_serving_side.py``,
runs there in a subprocess (its Harmony library is not mockoss's): SGLang's FastAPI app and
``OpenAIServingResponses``/``OpenAIServingCompletion`` unchanged, the engine replaced by the scripted
tokens (see that file for what stands in). This half builds the requests and compares. The scratch venv used
(``/work/sglang-run-venv``, ~5 GB): a ``.pth`` onto the vLLM CPU venv's site-packages (torch,
fastapi, transformers, zmq…), then ``pip install orjson triton torchvision dill gguf datasets
soundfile python-multipart openai==2.8.0 openai-harmony==0.0.4``, each added as SGLang's imports
asked for it.

Cases: every completion of the built-in scenarios plus ``SEEDED`` (default 200) seeded token
soups (Harmony markers, recipients, JSON, and CJK and emoji text whose characters are cut between
tokens), each asked on ``/v1/responses`` (a function tool declared) non-streamed and streamed, with
no limit and a 9-token ``max_output_tokens``, on ``/v1/completions`` non-streamed and streamed
(``include_usage``), with ``skip_special_tokens`` true and false, and on ``/v1/chat/completions``
with and without a declared tool, streamed (``include_usage``) and not (the built-in scenarios
also with ``--reasoning-parser``/``--tool-call-parser`` unset; ``reasoning_tokens``, the
scheduler's count, is left to the engine half, which reports 0, so mockoss runs with
``count_reasoning_tokens=false`` there); then the requests
``create_responses`` rejects or echoes, an unknown model, eight Completions variants, eleven
chat variants on three scenarios, and ``GET /v1/models`` and ``/v1/models/{model}`` (requests SGLang's request models refuse are compared without
their message, which is pydantic's). Bodies are compared after replacing ids (in
order of first appearance, so an id's reuse is compared too) and timestamps; an exception SGLang's
stream generator raises after HTTP 200 is compared with mockoss's ``Reply.abort`` (both present or
both absent). Prints the counts and the first differences; exit status 1 when any differ. Not
imported by mockoss or its tests.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MODEL = "openai/gpt-oss-20b"
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
TOOLS = [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
_IDS = re.compile(r"\b(?:resp_|rs_|msg_|ft_|call_|ci_|ws_)?[0-9a-f]{32}\b")
_TIMES = re.compile(r'"(created|created_at)":\d+')
#: Refused by SGLang's request model: its message is pydantic's error list plus the handler's
#: location in SGLang's install, so only status, shape and ``type`` are compared.
LOOSE = ({"tools": [{"type": "bogus"}]}, {"tools": [{"type": "function"}]})
CHAT_LOOSE = ({"messages": "hi"},)
CHAT_VARIANTS = [
    {"messages": []}, {"messages": "hi"}, {"tool_choice": "required"}, {"tool_choice": "none"},
    {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, {"separate_reasoning": False},
    {"model": "other-model"}, {"max_tokens": 9}, {"max_tokens": 9, "stream": True},
    {"stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}},
    {"stream": True, "tool_choice": "required"},
]
REJECTS = [
    {"tool_choice": "required"},
    {"tool_choice": "none"},
    {"tool_choice": {"type": "function", "name": "get_weather"}},
    {"tool_choice": {"type": "function", "name": "get_time"}},
    {"tool_choice": "required", "tools": []},
    {"text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}}},
    {"tools": [{"type": "web_search_preview"}]},
    {"previous_response_id": "resp_1"},
    {"background": True},
    {"include": ["message.output_text.logprobs"]},
    {"model": "gpt-4o"},
    {"stream": True, "include": ["reasoning.encrypted_content"], "reasoning": {"summary": "auto", "effort": "high"}},
    {"include": ["reasoning.encrypted_content"], "reasoning": {"summary": "detailed"}},
    {"tool_choice": "required", "tools": [{"type": "web_search"}, {"type": "mcp", "server_label": "x"}]},
    {"model": None}, {"model": None, "stream": True}, {"request_id": "resp_mine"}, {"tools": [{"type": "bogus"}]},
    {"tools": [{"type": "function"}]},
    {"input": [{"type": "function_call_output", "call_id": "call_1", "output": "15 C"}]},
    {"input": [{"role": "user", "content": "Weather?"}, {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
               {"type": "function_call_output", "call_id": "call_1", "output": "15 C"}]},
    {"input": [{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "hm"}]}, {"role": "system", "content": "Be brief."},
               {"role": "user", "content": [{"type": "input_text", "text": "hi"}, {"type": "input_image", "image_url": "http://x/y.png"}]}]},
    {"input": [{"type": "function_call_output", "call_id": "call_9", "output": "x"}], "stream": True},
    {"instructions": "Be brief.", "temperature": 0.5, "top_p": 0.9, "metadata": {"k": "v"}, "user": "u", "store": False,
     "reasoning": {"effort": "low"}, "max_output_tokens": 50, "text": {"format": {"type": "text"}}, "parallel_tool_calls": False},
]


def _norm(text: str) -> str:
    seen: dict[str, str] = {}
    text = _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}:{m.group(0).split('_')[0] if '_' in m.group(0) else ''}>"), text)
    return _TIMES.sub(r'"\1":0', text)


def _without_message(body: str) -> str:
    data = json.loads(body)
    data.get("error", data)["message"] = "…"  # nested (Responses) or flat (chat)
    return json.dumps(data)


def _seeded(count: int) -> list[tuple[str, list[int]]]:
    from mockoss.harmony.encoding import load_encoding

    enc = load_encoding()
    pieces = ["<|channel|>", "analysis", "final", "commentary", " to=functions.get_weather", " to=functions.x", " to=browser.search",
              " to=python", " to=foo", "<|message|>", "<|end|>", "<|start|>", "assistant", "<|constrain|>", "json", '{"city":"Paris"}',
              " hi", " there.", "\n", " ", "é", "🌧️", " 雨が降る", "<|call|>", "<|return|>", "Done"]
    rng = random.Random(11)
    out = []
    for i in range(count):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        tokens = enc.encode(text, allowed_special="all")
        if not tokens or tokens[-1] not in (200002, 200012):
            tokens.append(200002)
        out.append((f"seeded-{i}", tokens))
    return out


def _cases(seeded: int, chat: bool = False) -> list[dict[str, Any]]:
    from mockoss.scenario.loader import builtin_names, load_named

    completions = [(name, step.completion) for name in builtin_names() for step in load_named(name).steps if step.completion is not None]
    from mockoss.harmony.encoding import load_encoding

    for name, tokens in _seeded(seeded):
        from mockoss.harmony import Completion

        completions.append((name, Completion.from_text(load_encoding().decode(tokens))))
    cases = []
    for name, completion in completions:
        for limit in (None, 9):
            emission = completion.emit(limit)
            emitted = [list(emission.tokens), emission.finish_reason == "length"]
            for stream in (False, True):
                body: dict[str, Any] = {"model": MODEL, "input": "What is the weather?", "tools": TOOLS, "stream": stream}
                if limit:
                    body["max_output_tokens"] = limit
                cases.append({"label": f"{name} responses limit={limit} stream={stream}", "completion": completion,
                              "path": "/v1/responses", "body": body, "tokens": [emitted]})
        emission = completion.emit(200)
        emitted = [list(emission.tokens), emission.finish_reason == "length"]
        for stream in (False, True):
            for skip in (True, False):
                body = {"model": MODEL, "prompt": "Hi", "max_tokens": 200, "stream": stream, "skip_special_tokens": skip}
                if stream:
                    body["stream_options"] = {"include_usage": True}
                cases.append({"label": f"{name} completions stream={stream} skip={skip}", "completion": completion,
                              "path": "/v1/completions", "body": body, "tokens": [emitted]})
        if chat:
            for tools in (False, True):
                for stream in (False, True):
                    body = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather?"}], "stream": stream, "max_tokens": 200}
                    if tools:
                        body["tools"] = CHAT_TOOLS
                    if stream:
                        body["stream_options"] = {"include_usage": True}
                    cases.append({"label": f"{name} chat tools={tools} stream={stream}", "completion": completion,
                                  "path": "/v1/chat/completions", "body": body, "tokens": [emitted]})
                    if not name.startswith("seeded"):  # --reasoning-parser and --tool-call-parser unset
                        cases.append({"label": f"{name} chat no parsers tools={tools} stream={stream}", "completion": completion,
                                      "path": "/v1/chat/completions", "body": body, "tokens": [emitted],
                                      "reasoning_parser": None, "tool_call_parser": None})
    clean = next(c for n, c in completions if n == "clean-answer")
    for extra in REJECTS:
        body = {"model": MODEL, "input": "hi", "tools": TOOLS, **extra}
        cases.append({"label": f"reject {extra}", "completion": clean, "path": "/v1/responses", "body": body, "loose": extra in LOOSE,
                      "tokens": [[list(clean.emit(body.get("max_output_tokens")).tokens), False]]})
    for extra in ({"prompt": [""]}, {"prompt": [200006, 1428, 200008, 3575], "echo": True},
                  {"prompt": [200006, 1428, 200008, 3575], "echo": True, "stream": True}, {"echo": True}, {"echo": True, "stream": True}, {"prompt": [200006, 1428, 200008, 3575]},
                  {"stream": True, "stream_options": {"continuous_usage_stats": True}}, {"no_stop_trim": True, "skip_special_tokens": False}):
        body = {"model": MODEL, "prompt": "<|start|>user<|message|>Hi<|end|>", "max_tokens": 200, **extra}
        emission = clean.emit(200)
        cases.append({"label": f"completions {extra}", "completion": clean, "path": "/v1/completions", "body": body,
                      "tokens": [[list(emission.tokens), False]]})
    for path in ("/v1/models", f"/v1/models/{MODEL}", "/v1/models/gpt-4o"):
        cases.append({"label": f"GET {path}", "completion": clean, "path": path, "method": "GET", "body": {}, "tokens": []})
    for extra in CHAT_VARIANTS:
        for name in ("clean-answer", "clean-tool-call", "tool-call-leaked-as-text"):
            completion = next(c for n, c in completions if n == name)
            body = {"model": MODEL, "messages": [{"role": "user", "content": "Weather?"}], "tools": CHAT_TOOLS, **extra}
            emission = completion.emit(body.get("max_tokens"))
            cases.append({"label": f"chat {name} {extra}", "completion": completion, "path": "/v1/chat/completions", "body": body,
                          "tokens": [[list(emission.tokens), emission.finish_reason == "length"]], "loose": extra in CHAT_LOOSE})
    return cases


def _ours(case: dict[str, Any], index: int) -> dict[str, Any]:
    from mockoss.endpoints import endpoint_for_path
    from mockoss.scenario.compiled import Step
    from mockoss.server.core import MockServer

    # reasoning_tokens is the scheduler's count (engine side, which the SGLang half reports as 0).
    server = MockServer(profile="sglang", seed=index, switches=_switches(case))
    if case.get("method") == "GET":
        reply = MockServer(profile="sglang", seed=index).probe("GET", case["path"])
        return {"status": reply.status, "body": reply.body.decode(), "abort": None}
    reply, _ = server.respond(endpoint_for_path(case["path"]).name, json.dumps(case["body"]).encode(), {}, step=Step(index=0, completion=case["completion"], error=None))
    body = reply.body.decode() if not reply.streamed else b"".join(reply.frames).decode()
    return {"status": reply.status, "body": body, "abort": reply.abort}


def _switches(case: dict[str, Any]) -> dict[str, Any]:
    """The profile switches an exchange is answered with (see :func:`_ours`)."""
    switches: dict[str, Any] = {"count_reasoning_tokens": False} if case["path"] == "/v1/chat/completions" else {}
    if "tool_call_parser" in case:
        switches.update(reasoning_parser=case["reasoning_parser"], tool_call_parser=case["tool_call_parser"])
    return switches


def _record(out: Path, cases: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    """Write SGLang's answers to the exchanges of the built-in scenarios (not the seeded soups)."""
    rows = []
    for case, their in zip(cases, theirs, strict=True):
        if case["label"].startswith("seeded-") or case.get("loose"):
            continue
        rows.append({"label": case["label"], "method": case.get("method", "POST"), "path": case["path"], "request": case["body"],
                     "tokens": case["tokens"][0] if case["tokens"] else None, "switches": _switches(case),
                     "status": their["status"], "body": their["body"], "dropped": their["abort"] is not None})
    header = {"server": "sglang", "version": "0.5.23", "generator": "tools/sglang_serving_diff.py --record",
              "note": "SGLang's own serving code (OpenAIServingChat/Responses/Completion, DetokenizerManager) with the engine replaced by the scripted tokens"}
    out.write_text(json.dumps({"header": header, "exchanges": rows}, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


def main() -> int:
    src, python = sys.argv[1], sys.argv[2]
    seeded = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    cases = _cases(seeded, chat=True)
    from mockoss.endpoints import prompt_tokens

    for case in cases:
        if case["path"] == "/v1/chat/completions":
            case["prompt_tokens"] = prompt_tokens("chat", json.dumps(case["body"]).encode(), case["body"])
    with tempfile.TemporaryDirectory() as tmp:
        plan, out = Path(tmp, "plan.json"), Path(tmp, "out.json")
        plan.write_text(json.dumps([{k: case[k] for k in ("path", "method", "body", "tokens", "prompt_tokens", "reasoning_parser", "tool_call_parser") if k in case}
                                   for case in cases]))
        side = Path(__file__).with_name("sglang_serving_side.py")
        subprocess.run([python, str(side), src, str(plan), str(out)], check=True, stderr=subprocess.DEVNULL)
        theirs = json.loads(out.read_text())
    diffs = []
    for index, (case, their) in enumerate(zip(cases, theirs, strict=True)):
        ours = _ours(case, index)
        if case.get("loose"):
            their["body"], ours["body"] = (_without_message(r["body"]) for r in (their, ours))
        same = (their["status"], _norm(their["body"]), their["abort"] is None) == (ours["status"], _norm(ours["body"]), ours["abort"] is None)
        if not same:
            a, b = _norm(their["body"]), _norm(ours["body"])
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            diffs.append((case["label"], f"sglang {their['status']} abort={their['abort']}: ...{a[max(0, at - 200):at + 200]}",
                          f"mockoss {ours['status']} abort={ours['abort']}: ...{b[max(0, at - 200):at + 200]}"))
    if "--record" in sys.argv:  # the goldens tests/profiles/test_sglang_goldens.py replays
        _record(Path(sys.argv[sys.argv.index("--record") + 1]), cases, theirs)
    aborted = sum(1 for t in theirs if t["abort"])
    per_path = {path: sum(1 for c in cases if c["path"] == path) for path in ("/v1/chat/completions", "/v1/responses", "/v1/completions")}
    print(f"sglang 0.5.23 serving code: {len(cases)} exchanges {per_path} ({seeded} seeded completions), {aborted} of them dropped mid-stream by SGLang; {len(diffs)} differ")
    for diff in diffs[: int(__import__("os").environ.get("SHOW", "6"))]:
        print(*diff, sep="\n  ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
