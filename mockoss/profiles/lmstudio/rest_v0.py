"""LM Studio's REST API v0: ``POST /api/v0/chat/completions`` and ``POST /api/v0/completions``.

Source: lmstudio-ai/docs ``1_developer/2_rest/endpoints.mdx`` (REST API v0, LM Studio ≥ 0.3.6):
the body of the OpenAI-compatible endpoint plus ``stats`` (``tokens_per_second``,
``time_to_first_token``, ``generation_time``, ``stop_reason``: ``eosFound`` or
``maxPredictedTokensReached``), ``model_info`` (``arch``, ``quant``, ``format``,
``context_length``) and ``runtime`` (``name``, ``version``, ``supported_formats``), in that order
after ``usage``. Timings come from fixed rates so output is deterministic; ``model_info`` and
``runtime`` values for gpt-oss-20b are plausible constants (unverified). A streamed v0 chat is
the ``/v1`` stream (unverified: the docs show no v0 stream).

``/api/v0/completions`` (text in, text out): mockoss returns the scripted output's raw text with
its Harmony markup (the special tokens as text), as a raw completion of a Harmony model would
print it; whether LM Studio strips special tokens there is unverified.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, RequestContext

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.lmstudio import LmstudioProfile

__all__ = ["RUNTIME", "surface_v0_chat", "surface_v0_completions"]

#: Tokens per second and time to first token (s) behind ``stats``.
TOKENS_PER_SECOND = 50.0
TIME_TO_FIRST_TOKEN = 0.1
#: ``runtime`` of a Linux llama.cpp engine (unverified constants).
RUNTIME = {"name": "llama.cpp-linux-x86_64-avx2", "version": "1.50.0", "supported_formats": ["gguf"]}


def _extras(profile: LmstudioProfile, completion_tokens: int, finish_reason: str) -> dict[str, Any]:
    return {
        "stats": {
            "tokens_per_second": TOKENS_PER_SECOND,
            "time_to_first_token": TIME_TO_FIRST_TOKEN,
            "generation_time": round(completion_tokens / TOKENS_PER_SECOND, 3),
            "stop_reason": "maxPredictedTokensReached" if finish_reason == "length" else "eosFound",
        },
        "model_info": {"arch": "gpt-oss", "quant": "MXFP4", "format": "gguf", "context_length": profile.max_context_length},
        "runtime": RUNTIME,
    }


def surface_v0_chat(profile: LmstudioProfile, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
    """The ``/v1/chat/completions`` reply with v0's ``stats``, ``model_info`` and ``runtime``."""
    reply = profile.chat(completion, request, ctx)
    if reply.streamed or reply.status != 200:
        return reply
    body = json.loads(reply.body)
    body.pop("stats", None)
    usage = body.get("usage") or {}
    finish = (body.get("choices") or [{}])[0].get("finish_reason") or "stop"
    body.update(_extras(profile, int(usage.get("completion_tokens", 0)), finish))
    return Reply(status=200, body=profile._body(body), headers=reply.headers, log=reply.log)


def surface_v0_completions(profile: LmstudioProfile, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
    """``{"id":"cmpl-…","object":"text_completion","created","model","choices":[{"index","text",
    "logprobs":null,"finish_reason"}],"usage",…v0 extras}`` (streaming is refused with a 400: not
    emulated)."""
    from mockoss.harmony.encoding import load_encoding
    from mockoss.profiles.lmstudio.chat import chat_id

    if request.stream:
        return profile.error(400, "mockoss: a streamed /api/v0/completions is not emulated", param="stream")
    limit = request.body.get("max_tokens")  # LM Studio: absent or -1 means no limit
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0 else None
    emission = completion.emit(limit)
    key = ("lmstudio.v0.text", completion.cap(limit))  # the emission's text, decoded once per limit
    text = completion._memo.get(key)
    if text is None:
        text = completion._memo[key] = load_encoding().decode(list(emission.tokens)) if emission.tokens else ""
    tokens = len(emission.tokens)
    body: dict[str, Any] = {
        "id": chat_id(ctx.ids, "cmpl-"),
        "object": "text_completion",
        "created": ctx.created,
        "model": request.model,
        "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": emission.finish_reason}],
        "usage": {"prompt_tokens": ctx.prompt_tokens, "completion_tokens": tokens, "total_tokens": ctx.prompt_tokens + tokens},
    }
    body.update(_extras(profile, tokens, emission.finish_reason))
    return Reply(status=200, body=profile._body(body))
