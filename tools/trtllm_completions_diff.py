"""Differential check: the ``trtllm`` profile's ``/v1/completions`` against TensorRT-LLM's own completion post-processors.

Usage: ``python tools/trtllm_completions_diff.py COMPLETION_HANDLERS_PY REFERENCE_PYTHON [NEWEST_HANDLERS_PY] [--record DIR]``

* ``COMPLETION_HANDLERS_PY``: the completion part of ``tensorrt_llm/serve/postprocess_handlers.py``
  (from ``class CompletionPostprocArgs`` to the end of ``completion_response_post_processor``: 4,938
  characters), copied verbatim from the stored version of the Harmony period (the one with
  ``ChatCompletionPostprocArgs`` and ``chat_harmony_post_processor``; the search tool's index does
  not name its commit). Never committed here: bring your own copy.
* ``NEWEST_HANDLERS_PY``: the same part of the newest stored version (``_ensure_stream_metadata``,
  ``CompletionStreamResponse`` for the usage chunk, the ``ctx_usage`` helpers; 7,715 characters with
  ``_ctx_usage_from_outputs``, ``_ctx_usage_for_postproc`` and ``_ensure_stream_metadata`` put
  first), compared with the profile's defaults (``trtllm``) on the same model stubs (the newest
  ``openai_protocol.py`` was not read whole).
* ``REFERENCE_PYTHON``: a scratch venv's python with ``pydantic`` (the one of
  ``tools/trtllm_adapter_diff.py`` serves).
* ``--record DIR``: also write the Harmony-period post-processors' own replies (normalised as
  compared; the run against ``trtllm@2025.09.19``, not the newest) for every built-in scenario
  completion and request shape to ``DIR/completions.jsonl.gz`` (not the seeded completions):
  ``tests/golden/trtllm-2025.09.19/``, replayed in CI by ``tests/golden/test_trtllm_goldens.py``.

What runs is TensorRT-LLM's own ``completion_response_post_processor`` and
``completion_stream_post_processor`` (the latter once per engine response, as ``completion_generator``
calls it, ``data: [DONE]`` appended as ``generator_wrapper`` does; the non-streamed body dumped as
``JSONResponse(model_dump())`` renders it). Stubbed: the protocol models (:data:`_PROTOCOL`: ``tools/trtllm_adapter_diff.py``'s chat
models, usage and ``ChatCompletionStreamResponse``, plus the completion models, fields in the order
the stored ``openai_protocol.py`` of that period declares them), ``PostprocArgs``,
``nvtx_range_debug`` and ``to_disaggregated_params``. Not checked by this tool: the engine and the
detokenizer. Both sides are fed mockoss's own engine emulation
(:func:`mockoss.profiles.trtllm.completions.engine_output`, ``engine_batches``, ``stream_texts``), so
this checks the post-processors' mapping (fields, order, usage, echo, ``detokenize``,
``stream_options``, the usage chunk) against the profile at ``trtllm@2025.09.19``, ids and
``created`` normalised. Cases: every completion of the built-in scenarios and the 300 seeded ones of
``tools/trtllm_adapter_diff.py`` (imported from it), whole and cut at 7 tokens, each non-streamed and streamed with ``stream_interval`` 1 and 3, under several
request shapes (:data:`_SHAPES`). Exit status 1 when any reply differs. Not imported by mockoss or
its tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from trtllm_adapter_diff import _PROTOCOL as _CHAT_PROTOCOL  # run from tools/: its chat models, usage and stream chunk
from trtllm_adapter_diff import (
    completions,  # the same scenario and seeded completions
    record_option,
    scenario_case,
    write_golden,
)

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.registry import get_profile
from mockoss.profiles.trtllm.chat import engine_batches
from mockoss.profiles.trtllm.completions import engine_output, kept_ids, stream_texts

MODEL = "openai/gpt-oss-20b"
RELEASE = "2025.09.19"
#: (name, request body fields): defaults, usage options, echo, skip_special_tokens false, detokenize false.
_SHAPES = [
    ("plain", {}),
    ("usage", {"stream_options": {}}),
    ("usage-final", {"stream_options": {"include_usage": True, "continuous_usage_stats": False}}),
    ("echo", {"echo": True, "prompt": "Q: é "}),
    ("raw", {"skip_special_tokens": False}),
    ("ids", {"detokenize": False}),
]

_PROTOCOL = _CHAT_PROTOCOL + '''
from dataclasses import dataclass
class StreamOptions(OpenAIBaseModel):
    include_usage: Optional[bool] = True
    continuous_usage_stats: Optional[bool] = True
class DisaggregatedParams(OpenAIBaseModel):
    request_type: str
class CompletionLogProbs(OpenAIBaseModel):
    text_offset: List[int] = Field(default_factory=list)
class CompletionResponseChoice(OpenAIBaseModel):
    index: int
    text: str
    token_ids: Optional[List[int]] = None
    logprobs: Optional[CompletionLogProbs] = None
    context_logits: Optional[Union[List[float], List[List[float]]]] = None
    finish_reason: Optional[str] = None
    stop_reason: Optional[Union[int, str]] = Field(default=None)
    disaggregated_params: Optional[DisaggregatedParams] = Field(default=None)
    avg_decoded_tokens_per_iter: Optional[float] = Field(default=None)
class CompletionResponse(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"cmpl-{str(uuid.uuid4().hex)}")
    object: str = "text_completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: List[CompletionResponseChoice]
    usage: UsageInfo
    prompt_token_ids: Optional[Union[List[List[int]], List[int]]] = None
class CompletionResponseStreamChoice(OpenAIBaseModel):
    index: int
    text: str
    token_ids: Optional[List[int]] = None
    logprobs: Optional[CompletionLogProbs] = None
    finish_reason: Optional[str] = None
    stop_reason: Optional[Union[int, str]] = Field(default=None)
    avg_decoded_tokens_per_iter: Optional[float] = Field(default=None)
class CompletionStreamResponse(OpenAIBaseModel):
    id: str = Field(default_factory=lambda: f"cmpl-{str(uuid.uuid4().hex)}")
    object: str = "text_completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: List[CompletionResponseStreamChoice]
    usage: Optional[UsageInfo] = Field(default=None)
CompletionRequest = DetokenizedGenerationResultBase = GenerationResult = Any
@dataclass(kw_only=True)
class PostprocArgs:
    first_iteration: bool = True
    num_prompt_tokens: Optional[int] = None
    tokenizer: Any = None
def nvtx_range_debug(name):
    return lambda function: function
def to_disaggregated_params(params):
    return None
from typing import Tuple
GenerationResultBase = Any
def rewrite_usage_info_from_ctx(usage, ctx_usage):
    assert ctx_usage is None
def rewrite_usage_response_from_ctx(response, ctx_usage):
    assert ctx_usage is None
'''

_DRIVER = '''
import json, sys
from handlers import CompletionPostprocArgs, StreamOptions, completion_response_post_processor, completion_stream_post_processor
class Output:
    index, disaggregated_params = 0, None
class Result:
    context_logits, cached_tokens, avg_decoded_tokens_per_iter, id = None, 0, None, 1
    def __init__(self): self.outputs = [Output()]
for line in sys.stdin:
    case = json.loads(line)
    body = case["body"]
    options = body.get("stream_options")
    args = CompletionPostprocArgs(echo=bool(body.get("echo")), model=case["model"], stream_options=None if options is None else StreamOptions(**options),
                                  detokenize=body.get("detokenize", True), num_prompt_tokens=case["prompt_tokens"])
    if args.echo:
        args.prompt = body["prompt"]
    rsp, out = Result(), None
    out = rsp.outputs[0]
    if not body.get("stream"):
        out.text, out.token_ids, out.finish_reason, out.stop_reason = case["text"], case["tokens"], case["finish"], case["stop_reason"]
        out.length = len(case["tokens"])
        body = completion_response_post_processor(rsp, args).model_dump()
        print(json.dumps({"body": json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))}), flush=True)
        continue
    frames = []
    for (start, stop, done), text in zip(case["bounds"], case["texts"]):
        out.text_diff, out.token_ids_diff, out.length = text, case["tokens"][start:stop], stop
        out.finish_reason, out.stop_reason = (case["finish"], case["stop_reason"]) if done else (None, None)
        rsp._done = done
        frames += completion_stream_post_processor(rsp, args)
    frames.append("data: [DONE]\\n\\n")
    print(json.dumps({"frames": frames}), flush=True)
'''

_ID = re.compile(r'"id":"((?:chatcmpl|cmpl)-[0-9a-f]*)"')


def normalise(text: str) -> str:
    """``created`` zeroed and each distinct id replaced by its ordinal (``cmpl-1`` for the first
    id of the reply): a fresh id per chunk and one id per stream stay apart."""
    seen: dict[str, str] = {}

    def ordinal(match: re.Match[str]) -> str:
        prefix = match.group(1).split("-")[0]
        return f'"id":"{prefix}-{seen.setdefault(match.group(1), str(len(seen) + 1))}"'

    return _ID.sub(ordinal, re.sub(r'"created":\d+', '"created":0', text))


def cases(release: str):
    profile = get_profile(release)
    for label, completion in completions():
        for max_tokens in (None, 7):
            for shape, fields in _SHAPES:
                for stream, interval in ((False, 1), (True, 1), (True, 3)):
                    if "stream_options" in fields and not stream:
                        continue
                    body = {"model": MODEL, "prompt": "x", **fields, "stream": stream}
                    if max_tokens is not None:
                        body["max_tokens"] = max_tokens
                    out = engine_output(completion, max_tokens, config_stops=profile.generation_config_stops, keep_stop=False)  # type: ignore[attr-defined]
                    skip = body.get("skip_special_tokens", True)
                    bounds = engine_batches(len(out.emitted), len(out.tokens), interval)
                    yield {
                        "label": f"{label} max_tokens={max_tokens} {shape} stream={stream}/{interval}", "completion": completion,
                        "interval": interval, "body": body, "model": MODEL, "prompt_tokens": 10, "tokens": list(out.tokens),
                        "finish": out.finish_reason, "stop_reason": out.stop_reason, "bounds": bounds,
                        "texts": stream_texts(out.tokens, bounds, skip_special=skip),
                        "text": load_encoding().decode(kept_ids(out.tokens, skip)),
                    }


def ours(case: dict, index: int, release: str) -> str:
    profile = get_profile(release, {"stream_interval": case["interval"]})
    body = case["body"]
    view = ENDPOINTS["completions"].schema.model_validate(body).view(MODEL, body)  # the server's own request path
    reply = profile.surface("completions", case["completion"], view, RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=10))
    return normalise(b"".join(reply.frames).decode() if body["stream"] else reply.body.decode())


def theirs(handlers: str, python: str, all_cases: list[dict]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "handlers.py").write_text(_PROTOCOL + "\n" + Path(handlers).read_text(encoding="utf-8"), encoding="utf-8")
        Path(tmp, "driver.py").write_text(_DRIVER)
        payload = "".join(json.dumps({k: v for k, v in c.items() if k != "completion"}) + "\n" for c in all_cases)
        env = {**os.environ, "PYTHONPATH": tmp}
        done = subprocess.run([python, str(Path(tmp, "driver.py"))], input=payload, capture_output=True, text=True, env=env, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return [normalise("".join(r["frames"]) if "frames" in r else r["body"]) for r in rows]


def main() -> int:
    failed = False
    argv, record = record_option(sys.argv[1:])
    python, runs = argv[1], [(argv[0], f"trtllm@{RELEASE}")]
    if len(argv) > 2:
        runs.append((argv[2], "trtllm"))
    for handlers, release in runs:
        all_cases = list(cases(release))
        reference = theirs(handlers, python, all_cases)
        if record is not None and release == f"trtllm@{RELEASE}":
            header = {"generator": "tools/trtllm_completions_diff.py --record", "profile": release,
                      "server": "NVIDIA/TensorRT-LLM tensorrt_llm/serve/postprocess_handlers.py of the Harmony period (completion_response_post_processor, "
                                "completion_stream_post_processor) on mockoss's engine emulation; protocol models stubbed",
                      "model": MODEL, "prompt_tokens": 10, "normalised": "each distinct cmpl-/chatcmpl- id -> its ordinal in the reply, created -> 0"}
            rows = [{"case": name, "i": i, "tokens": [int(t) for t in c["completion"].tokens], "body": c["body"], "interval": c["interval"], "reply": ref}
                    for i, (c, ref) in enumerate(zip(all_cases, reference, strict=True)) if (name := scenario_case(c["label"].split(" ")[0]))]
            write_golden(record / "completions.jsonl.gz", header, rows)
        differ = [(c, r, m) for i, (c, r) in enumerate(zip(all_cases, reference, strict=True)) if r != (m := ours(c, i, release))]
        streamed = sum(1 for c in all_cases if c["body"]["stream"])
        print(f"{release} /v1/completions ({Path(handlers).name}): {len(all_cases)} replies ({streamed} streamed), {len(differ)} differ")
        for case, ref, mine in differ[:3]:
            at = next((i for i, (a, b) in enumerate(zip(ref, mine)) if a != b), min(len(ref), len(mine)))
            print(f"  {case['label']} (from character {at})\n    theirs: {ref[max(0, at - 150):at + 250]!r}\n    ours:   {mine[max(0, at - 150):at + 250]!r}")
        failed |= bool(differ)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
