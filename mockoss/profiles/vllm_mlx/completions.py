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
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply, RequestContext
from mockoss.profiles.vllm_mlx.engine import engine_outputs, limited_tokens, token_limit, usage
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
    outputs = engine_outputs(limited_tokens(completion, limit), limit)
    finish = outputs[-1][2] or "stop"
    count = len(outputs) if finish == "length" else len(outputs) - 1
    if bool(body.get("stream", False)):
        frames = []
        for done, (text, finished, reason) in enumerate(outputs, 1):
            data: dict[str, Any] = {
                "id": "cmpl-" + ctx.ids.next()[:8], "object": "text_completion", "created": ctx.created, "model": model,
                "choices": [{"index": 0, "text": text, "finish_reason": reason if finished else None}],
            }
            if finished:
                data["usage"] = usage(ctx.prompt_tokens, min(done, count))
            frames.append(f"data: {json.dumps(data)}\n\n".encode())
        frames.append(b"data: [DONE]\n\n")
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
    prompts = body.get("prompt")
    n = len(prompts) if isinstance(prompts, list) and prompts else 1
    text = clean_output_text("".join(t for t, _, _ in outputs))
    rid = "cmpl-" + ctx.ids.next()[:8]
    choices = [{"index": i, "text": text, "finish_reason": finish} for i in range(n)]
    out = {"id": rid, "object": "text_completion", "created": ctx.created, "model": model, "choices": choices, "usage": usage(ctx.prompt_tokens * n, count * n)}
    return Reply(status=200, body=dumps(out).encode())
