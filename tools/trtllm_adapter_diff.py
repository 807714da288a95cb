"""Differential check: the ``trtllm`` profile against TensorRT-LLM's own ``harmony_adapter.py``.

Usage: ``python tools/trtllm_adapter_diff.py HARMONY_ADAPTER_PY REFERENCE_PYTHON [RELEASE] [--record DIR]``

* ``HARMONY_ADAPTER_PY``: ``tensorrt_llm/serve/harmony_adapter.py`` of NVIDIA/TensorRT-LLM at the
  commit the profile is read from (38134b130944ed5c037949456df20300126ec728; 73,533 characters).
  Never committed here: bring your own copy.
* ``REFERENCE_PYTHON``: a scratch venv's python with ``openai-harmony==0.0.4`` (TensorRT-LLM's pin)
  and ``pydantic`` (``python -m venv /work/trtllm-venv/venv; …/pip install openai-harmony==0.0.4
  pydantic``); ``TIKTOKEN_ENCODINGS_BASE`` is pointed at mockoss's vocabulary cache.
* ``RELEASE``: the timeline release to compare with (default ``2025.09.19``: the behaviour that
  commit has).
* ``--record DIR``: also write the adapter's own replies (normalised as compared) for every
  built-in scenario completion, every request shape above, to ``DIR/chat.jsonl.gz`` (the seeded
  completions are not recorded): ``tests/golden/trtllm-2025.09.19/``, replayed in CI by
  ``tests/golden/test_trtllm_goldens.py``.

The adapter imports ``tensorrt_llm.executor`` (the C++ runtime), ``tensorrt_llm.logger`` and the
protocol models (torch, xgrammar): those are stubbed (:data:`_PROTOCOL`: the models' fields as the
stored ``openai_protocol.py`` of that period declares them). The reference runs in the scratch venv
as a subprocess: ``handle_non_streaming_response`` on the output tokens, and
``handle_streaming_response`` called once per engine response (``stream_interval`` 1 and 3) the way
``chat_harmony``'s generator does, with a fake ``GenerationResult`` whose ``abort()`` ends the loop.
Both sides' bytes are compared after ids (``chatcmpl-…``, ``call_…``) and ``created`` are
normalised. Cases: every completion of the built-in scenarios and 300 seeded malformed ones, whole
and cut at 7 tokens, without tools, with the called tools declared, and with ``tool_choice:
"none"``; each once per ``harmony_library`` value. Prints the counts and the first differences;
exit status 1 when the profile's default library differs anywhere. Not imported by mockoss or its
tests.

Measured 2026-12-01 (adapter at 38134b13, openai-harmony 0.0.4 and pydantic 2.14 in
``/work/trtllm-venv/venv``): 6,318 replies (4,212 streamed), 0 differ with
``harmony_library=openai-harmony-0.0.8``; 6 differ with ``oss-harmony`` (the doubled-channel header
of ``tool-name-with-channel-token``, where the fork cuts the second ``<|channel|>`` out).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mockoss.harmony import Completion
from mockoss.harmony.encoding import vocabulary_dir
from mockoss.harmony.library import HARMONY_LIBRARIES
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ToolDecl
from mockoss.profiles.registry import get_profile
from mockoss.scenario.loader import builtin_names, load_named

MODEL = "openai/gpt-oss-20b"
PIECES = ["<|start|>assistant", "<|channel|>", "analysis", "commentary", "final", " to=functions.get_weather", " to=python",
          " to=browser.search", " <|constrain|>json", " code", "<|message|>", '{"city":"Paris"}', "print(1)", "Hello", " world",
          "<|end|>", "<|call|>", "<|return|>", "<|start|>", " ", "x", "é"]

_PROTOCOL = '''
import time, uuid
from typing import Any, Dict, List, Literal, Optional, Union
from pydantic import BaseModel, ConfigDict, Field
ChatCompletionMessageParam = Any
class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
class PromptTokensDetails(OpenAIBaseModel):
    cached_tokens: int = 0
class UsageInfo(OpenAIBaseModel):
    prompt_tokens: int = 0
    total_tokens: int = 0
    completion_tokens: Optional[int] = 0
    prompt_tokens_details: Optional[PromptTokensDetails] = None
class FunctionCall(OpenAIBaseModel):
    name: str
    arguments: str
class DeltaFunctionCall(OpenAIBaseModel):
    name: Optional[str] = None
    arguments: Optional[str] = None
class ToolCall(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"chatcmpl-tool-{uuid.uuid4().hex}")
    type: Literal["function"] = "function"
    function: FunctionCall
class DeltaToolCall(OpenAIBaseModel):
    id: Optional[str] = None
    type: Optional[Literal["function"]] = None
    index: int
    function: Optional[DeltaFunctionCall] = None
class ChatMessage(OpenAIBaseModel):
    role: str
    content: Optional[str] = None
    reasoning_content: Optional[str] = None
    reasoning: Optional[str] = None
    tool_calls: List[ToolCall] = Field(default_factory=list)
class ChatCompletionResponseChoice(OpenAIBaseModel):
    index: int
    message: ChatMessage
    logprobs: Optional[Any] = None
    finish_reason: Optional[str] = None
    stop_reason: Optional[Union[int, str]] = None
    mm_embedding_handle: Optional[Dict[str, Any]] = None
    disaggregated_params: Optional[Any] = None
    avg_decoded_tokens_per_iter: Optional[float] = None
class ChatCompletionResponse(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    object: Literal["chat.completion"] = "chat.completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: List[ChatCompletionResponseChoice]
    usage: UsageInfo
    prompt_token_ids: Optional[List[int]] = None
class DeltaMessage(OpenAIBaseModel):
    role: Optional[str] = None
    content: Optional[str] = None
    reasoning_content: Optional[str] = None
    reasoning: Optional[str] = None
    tool_calls: Optional[List[DeltaToolCall]] = None
class ChatCompletionResponseStreamChoice(OpenAIBaseModel):
    index: int
    delta: DeltaMessage
    logprobs: Optional[Any] = None
    finish_reason: Optional[str] = None
    stop_reason: Optional[Union[int, str]] = None
    avg_decoded_tokens_per_iter: Optional[float] = None
class ChatCompletionStreamResponse(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: List[ChatCompletionResponseStreamChoice]
    usage: Optional[UsageInfo] = None
class FunctionDefinition(OpenAIBaseModel):
    name: str
    description: Optional[str] = None
    parameters: Optional[Dict[str, Any]] = None
class ChatCompletionToolsParam(OpenAIBaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition
'''

_DRIVER = '''
import json, sys, types
from tensorrt_llm.serve import harmony_adapter as ha
from tensorrt_llm.serve.openai_protocol import ChatCompletionToolsParam, FunctionDefinition
STOPS = (200002, 200012)
class Output:
    def __init__(self): self.token_ids, self.token_ids_diff, self.finish_reason, self.stop_reason = [], [], None, None
class Result:
    def __init__(self): self.outputs, self._done, self.aborted = [Output()], False, False
    def abort(self): self.aborted = True
for n, line in enumerate(sys.stdin):
    case = json.loads(line)
    emitted, finish = case["tokens"], case["finish"]
    tokens, stop_reason = emitted, None
    if finish == "stop" and emitted and emitted[-1] in STOPS:
        tokens, stop_reason = emitted[:-1], (200012 if emitted[-1] == 200012 else None)
    tools = [ChatCompletionToolsParam(function=FunctionDefinition(name=t)) for t in case["tools"]] or None
    if not case["stream"]:
        out = Output(); out.token_ids, out.finish_reason = tokens, finish
        body = ha.handle_non_streaming_response(tools, case["tool_choice"], [out], case["model"], 10).model_dump()
        print(json.dumps({"body": json.dumps(body, ensure_ascii=False, separators=(",", ":"))}), flush=True)
        continue
    bounds, last, k = [], 0, case["interval"]
    for j in range(k, len(emitted), k):
        bounds.append((last, j, False)); last = j
    bounds.append((last, len(tokens), True))
    result, frames = Result(), []
    for start, stop, done in bounds:
        out = result.outputs[0]
        out.token_ids, out.token_ids_diff = tokens[:stop], tokens[start:stop]
        out.finish_reason, out.stop_reason = (finish, stop_reason) if done else (None, None)
        result._done = done
        frames += ha.handle_streaming_response(tools, case["tool_choice"], result, case["model"], f"req-{n}", done, 10)
        if result.aborted:
            break
    frames.append("data: [DONE]\\n\\n")
    print(json.dumps({"frames": frames}), flush=True)
'''

_NORMALISE = [(re.compile(r"chatcmpl-[0-9a-f]{32}"), "chatcmpl-X"), (re.compile(r"call_[0-9a-f]{8}"), "call_X"), (re.compile(r'"created":\d+'), '"created":0')]


def normalise(text: str) -> str:
    for pattern, replacement in _NORMALISE:
        text = pattern.sub(replacement, text)
    return text


def scenario_case(label: str) -> str | None:
    """``"name#step"`` for a built-in scenario's label (``name[step]``), None for a seeded one."""
    match = re.fullmatch(r"(.+)\[(\d+)\]", label)
    return None if label.startswith("generated[") or match is None else f"{match[1]}#{match[2]}"


def record_option(argv: list[str]) -> tuple[list[str], Path | None]:
    """``argv`` without ``--record DIR``, and ``DIR`` (None without the option)."""
    if "--record" not in argv:
        return argv, None
    at = argv.index("--record")
    return argv[:at] + argv[at + 2:], Path(argv[at + 1])


def write_golden(path: Path, header: dict, rows: list[dict]) -> None:
    """Write ``header`` then ``rows`` as compact JSON lines, gzip'd reproducibly (mtime 0), to ``path``."""
    lines = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
    lines += [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))
    print(f"recorded {len(rows)} replies to {path} ({path.stat().st_size:,} bytes)")


def completions():
    """``(label, Completion)``: the built-in scenarios' completions, then seeded malformed ones."""
    for name in builtin_names():
        for index, step in enumerate(load_named(name).steps):
            if step.completion is not None:
                yield f"{name}[{index}]", step.completion
    rng = random.Random(9256)
    for n in range(300):
        yield f"generated[{n}]", Completion.from_text("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 16))))


def cases():
    for label, completion in completions():
        called = sorted(set(re.findall(r"to=functions\.([\w.-]+)", completion.text)) | {"get_weather"})
        for max_tokens in (None, 7):
            emission = completion.emit(max_tokens)
            for tools, choice in (((), None), (tuple(called), None), (tuple(called), "none")):
                for stream, interval in ((False, 1), (True, 1), (True, 3)):
                    yield {
                        "label": f"{label} max_tokens={max_tokens} tools={len(tools)} tool_choice={choice} stream={stream}/{interval}",
                        "tokens": list(emission.tokens), "finish": emission.finish_reason, "tools": list(tools),
                        "tool_choice": choice, "stream": stream, "interval": interval, "model": MODEL,
                        "completion": completion, "max_tokens": max_tokens,
                    }


def ours(case: dict, release: str, library: str, index: int) -> str:
    profile = get_profile(f"trtllm@{release}", {"harmony_library": library, "stream_interval": case["interval"]})
    request = ChatRequestView(
        model=MODEL, tools=tuple(ToolDecl("function", t) for t in case["tools"]), tool_choice=case["tool_choice"],
        stream=case["stream"], max_tokens=case["max_tokens"],
    )
    reply = profile.chat(case["completion"], request, RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=10))
    return normalise(b"".join(reply.frames).decode() if case["stream"] else reply.body.decode())


def theirs(adapter: str, python: str, all_cases: list[dict]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        serve = Path(tmp, "tensorrt_llm", "serve")
        serve.mkdir(parents=True)
        Path(tmp, "tensorrt_llm", "__init__.py").write_text("")
        Path(tmp, "tensorrt_llm", "executor.py").write_text("GenerationResult = object\n")
        Path(tmp, "tensorrt_llm", "logger.py").write_text("import logging\nlogger = logging.getLogger('trtllm')\n")
        Path(serve, "__init__.py").write_text("")
        Path(serve, "openai_protocol.py").write_text(_PROTOCOL)
        shutil.copy(adapter, serve / "harmony_adapter.py")
        Path(tmp, "driver.py").write_text(_DRIVER)
        env = {**os.environ, "PYTHONPATH": tmp, "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir())}
        payload = "".join(json.dumps({k: v for k, v in c.items() if k != "completion"}) + "\n" for c in all_cases)
        done = subprocess.run([python, str(Path(tmp, "driver.py"))], input=payload, capture_output=True, text=True, env=env, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return [normalise("".join(r["frames"]) if "frames" in r else r["body"]) for r in rows]


def main() -> int:
    argv, record = record_option(sys.argv[1:])
    adapter, python, *rest = argv
    release = rest[0] if rest else "2025.09.19"
    all_cases = list(cases())
    reference = theirs(adapter, python, all_cases)
    if record is not None:
        header = {"generator": "tools/trtllm_adapter_diff.py --record", "profile": f"trtllm@{release}",
                  "server": "NVIDIA/TensorRT-LLM@38134b130944ed5c037949456df20300126ec728:tensorrt_llm/serve/harmony_adapter.py "
                            "(handle_non_streaming_response, handle_streaming_response; openai-harmony 0.0.4, runtime stubbed)",
                  "model": MODEL, "prompt_tokens": 10, "normalised": "chatcmpl-<32 hex> -> chatcmpl-X, call_<8 hex> -> call_X, created -> 0"}
        rows = [{"case": name, "i": i, "tokens": [int(t) for t in c["completion"].tokens], "tools": c["tools"], "tool_choice": c["tool_choice"],
                 "max_tokens": c["max_tokens"], "stream": c["stream"], "interval": c["interval"], "reply": ref}
                for i, (c, ref) in enumerate(zip(all_cases, reference, strict=True)) if (name := scenario_case(c["label"].split(" ")[0]))]
        write_golden(record / "chat.jsonl.gz", header, rows)
    default = get_profile("trtllm").harmony_library  # type: ignore[attr-defined]
    failed = False
    for library in HARMONY_LIBRARIES:
        differ = [(c, r, ours(c, release, library, i)) for i, (c, r) in enumerate(zip(all_cases, reference, strict=True))]
        differ = [d for d in differ if d[1] != d[2]]
        streamed = sum(1 for c in all_cases if c["stream"])
        print(f"trtllm@{release} harmony_library={library}: {len(all_cases)} replies ({streamed} streamed), {len(differ)} differ")
        for case, ref, mine in differ[:3]:
            at = next((i for i, (a, b) in enumerate(zip(ref, mine)) if a != b), min(len(ref), len(mine)))
            print(f"  {case['label']} (from character {at})\n    theirs: {ref[max(0, at - 150):at + 250]!r}\n    ours:   {mine[max(0, at - 150):at + 250]!r}")
        failed |= library == default and bool(differ)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
