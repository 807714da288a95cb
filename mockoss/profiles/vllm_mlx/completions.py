"""``POST /v1/completions`` as vllm-mlx serves gpt-oss (waybarrios/vllm-mlx@v0.6.0:
``vllm_mlx/server.py`` ``create_completion`` and ``stream_completion``, ``engine/simple.py``
``generate``).

No parser runs on this route. Not streamed, ``SimpleEngine.generate`` accumulates its stream and
returns ``clean_output_text`` of the text: the final channel's text when there is one, else the
text with the channel headers stripped (analysis text and ``<|end|>`` kept); one choice per prompt
(each played the scripted completion here), usage summed; pydantic's compact JSON. Streamed (the
first prompt only), every engine output is a chunk of its own made with Python's ``json.dumps``
(``", "``/``": "`` separators, non-ASCII escaped), with a *new* ``cmpl-`` id per chunk, the raw
text (markup kept, nothing cleaned), ``finish_reason`` and ``usage`` on the finished output, then
``data: [DONE]``. ``stream_options`` is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, IdSource, Reply, RequestContext
from mockoss.profiles.replay import Call, FramesTemplate, IdRecorder, templatable
from mockoss.profiles.vllm_mlx import cached
from mockoss.profiles.vllm_mlx.cached import Outputs
from mockoss.profiles.vllm_mlx.engine import token_limit, usage
from mockoss.profiles.vllm_mlx.parsers import clean_output_text
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["surface_completions"]


def surface_completions(profile: VllmMlxProfile, completion: Completion, request: Any, ctx: RequestContext, model: str) -> Reply:
    """vllm-mlx's text-completion reply (``request`` is a completions request view)."""
    body = request.body if isinstance(request.body, dict) else {}
    limit = token_limit(body.get("max_tokens"), profile.max_tokens)
    outputs = cached.outputs(completion, limit)
    finish = outputs[-1][2] or "stop"
    count = len(outputs) if finish == "length" else len(outputs) - 1
    if bool(body.get("stream", False)):
        if not templatable(completion.text):
            frames = _frames(outputs, count, lambda: "cmpl-" + ctx.ids.next()[:8], ctx.created, model, lambda n: usage(ctx.prompt_tokens, n))
        else:  # every chunk has an id of its own: a template the request's ids, created, model and usage go into
            def build() -> tuple[object, ...]:
                recorder = IdRecorder()
                frames = _frames(outputs, count, lambda: "cmpl-" + recorder.call(_chunk_id), recorder.value("created"),
                                 recorder.value("model"), lambda n: recorder.value(f"usage {n}"))
                return recorder.frozen(), FramesTemplate(frames)

            calls, template = cached.memoised(completion, ("vllm_mlx.completions.frames", cached.limit_key(completion, limit)), build)
            values = {"created": str(ctx.created).encode(), "model": json.dumps(model).encode()}
            for function, name in calls:
                if function is None and name.startswith("usage "):
                    values[name] = json.dumps(usage(ctx.prompt_tokens, int(name[6:]))).encode()
            frames = template.fill(_replayed(calls, ctx.ids, values))
        frames.append(b"data: [DONE]\n\n")
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
    prompts = body.get("prompt")
    n = len(prompts) if isinstance(prompts, list) and prompts else 1
    text = cached.memoised(completion, ("vllm_mlx.completions.text", cached.limit_key(completion, limit)),
                           lambda: clean_output_text("".join(t for t, _, _ in outputs)))
    rid = "cmpl-" + ctx.ids.next()[:8]
    choices = [{"index": i, "text": text, "finish_reason": finish} for i in range(n)]
    out = {"id": rid, "object": "text_completion", "created": ctx.created, "model": model, "choices": choices, "usage": usage(ctx.prompt_tokens * n, count * n)}
    return Reply(status=200, body=dumps(out).encode())


def _chunk_id(ids: IdSource) -> str:
    """A chunk id's digits: the first 8 hex digits of a draw (``new_id(ids, width=8)``)."""
    return ids.next()[:8]


def _replayed(calls: Sequence[Call], ids: IdSource, values: Mapping[str, bytes]) -> list[bytes]:
    """``IdRecorder.replay(calls, ids, values)``, each run of chunk ids drawn in one loop
    (:meth:`IdSource.hex_run`): the same ids in the same order. A 10,000-token stream draws
    10,682 of them; one by one they were most of its replay."""
    out: list[bytes] = []
    at, end = 0, len(calls)
    while at < end:
        function, arguments = calls[at]
        if function is _chunk_id:
            run = at
            while run < end and calls[run][0] is _chunk_id:
                run += 1
            out += [digits[:8].encode() for digits in ids.hex_run(run - at)]
            at = run
            continue
        out.append(function(ids, *arguments).encode() if function is not None else values[arguments])  # type: ignore[index]
        at += 1
    return out


def _frames(outputs: Outputs, count: int, new_id: Callable[[], str], created: Any, model: Any, usage_of: Callable[[int], Any]) -> list[bytes]:
    """One chunk per engine output (``json.dumps``' defaults), each with an id of its own."""
    frames = []
    for done, (text, finished, reason) in enumerate(outputs, 1):
        data: dict[str, Any] = {
            "id": new_id(), "object": "text_completion", "created": created, "model": model,
            "choices": [{"index": 0, "text": text, "finish_reason": reason if finished else None}],
        }
        if finished:
            data["usage"] = usage_of(min(done, count))
        frames.append(f"data: {json.dumps(data)}\n\n".encode())
    return frames
