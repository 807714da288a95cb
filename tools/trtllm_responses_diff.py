"""Differential check: the ``trtllm`` profile's ``/v1/responses`` against TensorRT-LLM's own
``responses_utils.py``.

Usage: ``python tools/trtllm_responses_diff.py SERVE_DIR REFERENCE_PYTHON [--record DIR]``

* ``SERVE_DIR``: a directory holding TensorRT-LLM's ``harmony_adapter.py`` (38134b13) and the
  ``responses_utils.py`` of the same period (the version whose ``process_streaming_events`` takes
  ``request, sampling_params, generator, harmony_adapter, model_name, conversation_store``; 36,703
  characters). Never committed here: bring your own copies.
* ``REFERENCE_PYTHON``: the scratch venv of ``tools/trtllm_adapter_diff.py`` plus
  ``openai==2.6.1`` (the openai types the events and items are dumped with).
* ``--record DIR``: also write ``responses_utils.py``'s own replies (normalised as compared) for
  every built-in scenario completion and request shape to ``DIR/responses.jsonl.gz`` (not the
  seeded completions): ``tests/golden/trtllm-2025.09.19/``, replayed in CI by
  ``tests/golden/test_trtllm_goldens.py``.

Stubbed: ``tensorrt_llm.bindings.steady_clock_now``, ``tensorrt_llm.llmapi`` (``SamplingParams``,
``RequestOutput``) and the protocol models (``ResponsesRequest.to_sampling_params`` and
``ResponsesResponse.from_request`` as the stored ``openai_protocol.py`` declares them). The
reference runs ``create_response`` (non-streamed; the body as FastAPI's ``jsonable_encoder`` writes
it, a raised exception as the 400's message) and ``process_streaming_events`` over a generator of
engine responses (``stream_interval`` 1 and 3; an exception ends the stream, which the profile
marks as an abort). Cases: the completions of ``tools/trtllm_adapter_diff.py``, whole and cut at
7 tokens, without and with the called tools. Ids (``resp_``, ``rs_``, ``msg_``, ``fc_``,
``call_``, ``ws_``) and times are normalised. Exit status 1 when any reply differs. Run from
``tools/`` (it imports ``trtllm_adapter_diff``).

Measured 2026-12-01: 4,212 replies (2,808 streamed), 0 differ.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from trtllm_adapter_diff import _PROTOCOL, MODEL, completions, record_option, scenario_case, write_golden

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony.encoding import vocabulary_dir
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.registry import get_profile

_RESPONSES_PROTOCOL = _PROTOCOL + '''
from openai.types.responses import ResponseFunctionToolCall, ResponseInputItemParam, ResponseOutputItem, ResponseReasoningItem
from openai.types.responses import ResponsePrompt, ResponseStatus, ResponseTextConfig
from openai.types.responses.response import ToolChoice
from openai.types.responses.tool import Tool
from openai.types.shared import Metadata, Reasoning
from tensorrt_llm.llmapi import SamplingParams
ResponseInputOutputItem = Union[ResponseInputItemParam, ResponseReasoningItem, ResponseFunctionToolCall]
class ResponsesRequest(OpenAIBaseModel):
    background: Optional[bool] = False
    include: Optional[list] = None
    input: Union[str, list[ResponseInputOutputItem]]
    instructions: Optional[str] = None
    max_output_tokens: Optional[int] = None
    max_tool_calls: Optional[int] = None
    metadata: Optional[Metadata] = None
    model: str
    parallel_tool_calls: Optional[bool] = False
    previous_response_id: Optional[str] = None
    prompt: Optional[ResponsePrompt] = None
    reasoning: Optional[Reasoning] = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] = "auto"
    store: Optional[bool] = True
    stream: Optional[bool] = False
    temperature: Optional[float] = None
    text: Optional[ResponseTextConfig] = None
    tool_choice: ToolChoice = "auto"
    tools: list[Tool] = Field(default_factory=list)
    top_logprobs: Optional[int] = 0
    top_p: Optional[float] = None
    truncation: Optional[Literal["auto", "disabled"]] = "disabled"
    user: Optional[str] = None
    request_id: str = Field(default_factory=lambda: f"resp_{uuid.uuid4().hex}")
    def to_sampling_params(self, default_max_tokens, default_sampling_params=None):
        max_tokens = default_max_tokens if self.max_output_tokens is None else min(self.max_output_tokens, default_max_tokens)
        default_sampling_params = default_sampling_params or {}
        temperature = 1.0 if self.temperature is None else self.temperature
        top_p = 1.0 if self.top_p is None else self.top_p
        return SamplingParams(temperature=temperature, top_p=top_p, max_tokens=max_tokens, logprobs=self.top_logprobs,
                              stop_token_ids=default_sampling_params.get("stop_token_ids"))
class ResponsesResponse(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"resp_{uuid.uuid4().hex}")
    created_at: int = Field(default_factory=lambda: int(time.time()))
    instructions: Optional[str] = None
    metadata: Optional[Metadata] = None
    model: str
    object: Literal["response"] = "response"
    output: list[ResponseOutputItem]
    parallel_tool_calls: bool
    temperature: float
    tool_choice: ToolChoice
    tools: list[Tool]
    top_p: float
    background: bool
    max_output_tokens: int
    max_tool_calls: Optional[int] = None
    previous_response_id: Optional[str] = None
    prompt: Optional[ResponsePrompt] = None
    reasoning: Optional[Reasoning] = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority"]
    status: ResponseStatus
    text: Optional[ResponseTextConfig] = None
    top_logprobs: int
    truncation: Literal["auto", "disabled"]
    usage: Optional[Any] = None
    user: Optional[str] = None
    @classmethod
    def from_request(cls, request, sampling_params, model_name, created_time, output, status, usage=None):
        return cls(id=request.request_id, created_at=created_time, instructions=request.instructions, metadata=request.metadata,
                   model=model_name, output=output, parallel_tool_calls=request.parallel_tool_calls,
                   temperature=sampling_params.temperature, tool_choice=request.tool_choice, tools=request.tools,
                   top_p=sampling_params.top_p, background=request.background, max_output_tokens=sampling_params.max_tokens,
                   max_tool_calls=request.max_tool_calls, previous_response_id=request.previous_response_id, prompt=request.prompt,
                   reasoning=request.reasoning, service_tier=request.service_tier, status=status, text=request.text,
                   top_logprobs=sampling_params.logprobs, truncation=request.truncation, user=request.user, usage=usage)
'''

_LLMAPI = '''
class SamplingParams:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
'''

_DRIVER = '''
import asyncio, json, sys
from fastapi.encoders import jsonable_encoder
from tensorrt_llm.serve import responses_utils as ru
from tensorrt_llm.serve.harmony_adapter import HarmonyAdapter
from tensorrt_llm.serve.openai_protocol import ResponsesRequest
STOPS = (200002, 200012)
adapter = HarmonyAdapter()
class Output:
    pass
class Result:
    def __init__(self): self.outputs = [Output()]
async def engine(bounds, tokens, finish):
    for start, stop, done in bounds:
        res = Result()
        out = res.outputs[0]
        out.token_ids, out.token_ids_diff, out.finish_reason = tokens[:stop], tokens[start:stop], (finish if done else None)
        yield res
async def run(case):
    request = ResponsesRequest(**case["body"])
    params = request.to_sampling_params(default_max_tokens=16384, default_sampling_params={"stop_token_ids": adapter.get_stop_tokens()})
    emitted, finish = case["tokens"], case["finish"]
    tokens = emitted[:-1] if finish == "stop" and emitted and emitted[-1] in STOPS else emitted
    if not case["body"].get("stream"):
        res = Result(); res.outputs[0].token_ids, res.outputs[0].finish_reason = tokens, finish
        try:
            response = await ru.create_response(None, request, params, case["body"]["model"], None, res, False, 0)
        except Exception as exc:
            return {"error": str(exc)}
        return {"body": json.dumps(jsonable_encoder(response), ensure_ascii=False, separators=(",", ":"))}
    bounds, last, k = [], 0, case["interval"]
    for j in range(k, len(emitted), k):
        bounds.append((last, j, False)); last = j
    bounds.append((last, len(tokens), True))
    frames = []
    try:
        async for frame in ru.process_streaming_events(request, params, engine(bounds, tokens, finish), adapter, case["body"]["model"], None):
            frames.append(frame)
    except Exception:
        frames.append("ABORT")
    return {"frames": frames}
for line in sys.stdin:
    print(json.dumps(asyncio.run(run(json.loads(line)))), flush=True)
'''

_IDS = [
    (re.compile(r"(resp|rs|msg|fc|call|ws)_[0-9a-f]{32}"), r"\1_X"),
    (re.compile(r'"created_at":\d+'), '"created_at":0'),
    (re.compile(r'"(id|call_id)":"(rs|msg|fc|call|ws)_X"'), r'"\1":"\2_X"'),
]


def normalise(text: str) -> str:
    for pattern, replacement in _IDS:
        text = pattern.sub(replacement, text)
    return text


def cases():
    for label, completion in completions():
        called = sorted(set(re.findall(r"to=functions\.([\w.-]+)", completion.text)) | {"get_weather"})
        for max_tokens in (None, 7):
            emission = completion.emit(max_tokens)
            for tools in ((), tuple(called)):
                for stream, interval in ((False, 1), (True, 1), (True, 3)):
                    body = {"model": MODEL, "input": "hi", "stream": stream,
                            "tools": [{"type": "function", "name": t, "parameters": {"type": "object"}} for t in tools]}
                    if max_tokens is not None:
                        body["max_output_tokens"] = max_tokens
                    yield {"label": f"{label} max_tokens={max_tokens} tools={len(tools)} stream={stream}/{interval}", "tokens": list(emission.tokens),
                           "finish": emission.finish_reason, "body": body, "interval": interval, "completion": completion, "tools": tools}


def ours(case: dict, index: int) -> str:
    profile = get_profile("trtllm", {"stream_interval": case["interval"]})
    body = case["body"]
    request = ENDPOINTS["responses"].schema.model_validate(body).view(MODEL, body)  # the server's own request path
    reply = profile.surface("responses", case["completion"], request, RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=10))
    if not body["stream"]:
        data = json.loads(reply.body)
        return normalise(json.dumps({"error": data["message"]}) if reply.status != 200 else reply.body.decode())
    return normalise("".join(f.decode() for f in reply.frames) + ("ABORT" if reply.abort else ""))


def theirs(serve_dir: str, python: str, all_cases: list[dict]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "tensorrt_llm")
        (root / "serve").mkdir(parents=True)
        (root / "llmapi").mkdir()
        (root / "__init__.py").write_text("")
        (root / "executor.py").write_text("GenerationResult = object\n")
        (root / "logger.py").write_text("import logging\nlogger = logging.getLogger('trtllm')\n")
        (root / "bindings.py").write_text("import datetime\ndef steady_clock_now():\n    return datetime.timedelta(0)\n")
        (root / "llmapi" / "__init__.py").write_text(_LLMAPI)
        (root / "llmapi" / "llm.py").write_text("RequestOutput = object\n")
        (root / "serve" / "__init__.py").write_text("")
        (root / "serve" / "openai_protocol.py").write_text(_RESPONSES_PROTOCOL)
        for name in ("harmony_adapter.py", "responses_utils.py"):
            shutil.copy(Path(serve_dir, name), root / "serve" / name)
        Path(tmp, "driver.py").write_text(_DRIVER)
        env = {**os.environ, "PYTHONPATH": tmp, "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir())}
        payload = "".join(json.dumps({k: v for k, v in c.items() if k != "completion"}) + "\n" for c in all_cases)
        done = subprocess.run([python, str(Path(tmp, "driver.py"))], input=payload, capture_output=True, text=True, env=env, check=True)
    out = []
    for line in done.stdout.splitlines():
        row = json.loads(line)
        out.append(normalise(json.dumps({"error": row["error"]}) if "error" in row else row.get("body") or "".join(row["frames"])))
    return out


def main() -> int:
    argv, record = record_option(sys.argv[1:])
    serve_dir, python = argv[:2]
    all_cases = list(cases())
    reference = theirs(serve_dir, python, all_cases)
    if record is not None:
        header = {"generator": "tools/trtllm_responses_diff.py --record", "profile": "trtllm",
                  "server": "NVIDIA/TensorRT-LLM tensorrt_llm/serve/responses_utils.py of autumn 2025 (create_response, process_streaming_events) "
                            "with harmony_adapter.py@38134b13; openai 2.6.1 types, runtime stubbed",
                  "model": MODEL, "prompt_tokens": 10,
                  "normalised": "(resp|rs|msg|fc|call|ws)_<32 hex> -> <prefix>_X, created_at -> 0; a 400 as {\"error\": message}; an aborted stream ends ABORT"}
        rows = [{"case": name, "i": i, "tokens": [int(t) for t in c["completion"].tokens], "body": c["body"], "interval": c["interval"], "reply": ref}
                for i, (c, ref) in enumerate(zip(all_cases, reference, strict=True)) if (name := scenario_case(c["label"].split(" ")[0]))]
        write_golden(record / "responses.jsonl.gz", header, rows)
    differ = [(c, r, ours(c, i)) for i, (c, r) in enumerate(zip(all_cases, reference, strict=True))]
    differ = [d for d in differ if d[1] != d[2]]
    print(f"trtllm /v1/responses: {len(all_cases)} replies ({sum(1 for c in all_cases if c['body']['stream'])} streamed), {len(differ)} differ")
    for case, ref, mine in differ[:4]:
        at = next((i for i, (a, b) in enumerate(zip(ref, mine)) if a != b), min(len(ref), len(mine)))
        print(f"  {case['label']} (from character {at})\n    theirs: {ref[max(0, at - 150):at + 250]!r}\n    ours:   {mine[max(0, at - 150):at + 250]!r}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
