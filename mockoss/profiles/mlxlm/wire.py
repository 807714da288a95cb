"""``POST /v1/chat/completions`` and ``POST /v1/completions`` as ``mlx_lm.server`` writes them.

Read from ``ml-explore/mlx-lm@v0.32.2:mlx_lm/server.py`` (``APIHandler.handle_completion``,
``generate_response``, ``completion_usage_response``, ``handle_chat_completions``,
``handle_text_completions``):

* Bodies are ``json.dumps`` with its defaults (``", "`` / ``": "`` separators, non-ASCII escaped);
  keys in the order ``id, system_fingerprint, object, model, created, choices[, usage]``.
* ``id``: ``chatcmpl-`` / ``cmpl-`` + a hyphenated uuid4; ``model`` echoes the request (absent:
  ``"default_model"``).
* gpt-oss has no reasoning markers nor tool parser in mlx-lm (``_infer_thinking`` and
  ``_infer_tool_parser`` match nothing in its vocabulary or template), so the text state machine
  passes everything: the whole completion, Harmony markup included, is ``content``; no
  ``reasoning``, no ``tool_calls``; a call ends on ``<|call|>``, an EOS token, with
  ``finish_reason: "stop"``.
* Non-streamed: ``message`` ``{"role", "content"}`` (``null`` when empty); ``usage`` with
  ``prompt_tokens_details.cached_tokens``; completion tokens count the stop token.
* Streamed: one chunk per decode step that produced text, every delta ``{"role": "assistant",
  "content": …}``; a finish chunk whose delta is ``{"role": "assistant"}``; with
  ``stream_options.include_usage`` a usage chunk (``choices: []``, ``object: "chat.completion"``
  even on ``/v1/completions``); ``data: [DONE]``. ``stream_options`` without ``include_usage``
  (``{}``) raises a ``KeyError`` after the finish chunk: the stream ends there, no ``[DONE]``. Text completions carry ``text`` instead of a delta.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from mockoss.harmony.completion import Cut
from mockoss.profiles.base import SSE_MEDIA_TYPE, IdSource, Reply, RequestContext
from mockoss.profiles.mlxlm.detokenizer import step_texts
from mockoss.profiles.replay import FramesTemplate, IdRecorder, templatable

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.mlxlm import MlxLmProfile

__all__ = ["surface"]

#: gpt-oss's EOS ids as mlx-lm loads them: ``generation_config.json``'s ``eos_token_id``
#: (``<|return|>``, ``<|endoftext|>``, ``<|call|>``; utils.py ``load_config``) plus the tokenizer's
#: ``eos_token`` (``<|return|>``).
EOS = frozenset({200002, 199999, 200012})
RETURN = 200002
_DONE = b"data: [DONE]\n\n"


def _uuid(ctx: RequestContext) -> str:
    """A deterministic uuid4 in its hyphenated form (``str(uuid.uuid4())``)."""
    return _uuid_text(ctx.ids)


def _limit(profile: MlxLmProfile, body: Any) -> int:
    """``max_completion_tokens``, else ``max_tokens``, else ``--max-tokens`` (512)."""
    body = body if isinstance(body, dict) else {}
    for key in ("max_completion_tokens", "max_tokens"):
        if isinstance(body.get(key), int) and not isinstance(body.get(key), bool):
            return int(body[key])
    return profile.max_tokens


def _usage(ctx: RequestContext, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": ctx.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": ctx.prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def _steps(completion: Completion, limit: int) -> tuple[int, str, tuple[str, ...]]:
    """``(completion tokens, finish_reason, each token's text)`` of ``completion`` under ``limit``,
    memoised on the completion. The key is the limit when it is at most the emission's length
    (it cuts, or, equal to it, makes ``length`` the finish of an answer without a stop token) and
    ``None`` above it (every such limit gives the unlimited emission: :meth:`Completion.cap`)."""
    key = ("mlxlm.steps", None if completion.cap(limit - 1) is None else Cut(limit))
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(limit)
    tokens = list(emission.tokens)
    finish = emission.finish_reason
    cut = next((i for i, t in enumerate(tokens) if t in EOS), None)
    if cut is not None:  # an earlier EOS (<|endoftext|>) ends generation too
        tokens, finish = tokens[: cut + 1], "stop"
    elif finish == "stop":
        if len(tokens) >= limit:  # the limit is checked before the next token is sampled
            finish = "length"
        else:  # a script that stops without a stop token: the model's next token is an EOS, counted
            tokens.append(RETURN)
    cached = completion._memo[key] = (len(tokens), finish, tuple(step_texts(tokens, finish, EOS)))
    return cached


def _uuid_text(ids: IdSource) -> str:
    return str(uuid.UUID(hex=ids.next(), version=4))


def surface(profile: MlxLmProfile, kind: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
    """``kind`` is ``"chat"`` or ``"text"``; ``request`` a chat or completions request view.

    The token texts are memoised per limit (:func:`_steps`), and a stream's chunks per (limit,
    kind, fingerprint) as a template (:mod:`mockoss.profiles.replay`) this request's id, model and
    ``created`` are joined into."""
    body = request.body if isinstance(request.body, dict) else {}
    limit = _limit(profile, body)
    count, finish, steps = _steps(completion, limit)
    chat = kind == "chat"
    model = body.get("model", "default_model")
    stream = bool(body.get("stream", False))
    request_id = ("chatcmpl-" if chat else "cmpl-") + _uuid(ctx)
    head: dict[str, Any] = {"id": request_id, "system_fingerprint": profile.system_fingerprint}
    if not stream:
        return Reply(status=200, body=json.dumps(_response(head, chat, False, model, ctx.created, "".join(steps), finish, _usage(ctx, count))).encode())
    if templatable(completion.text):
        key = ("mlxlm.frames", None if completion.cap(limit - 1) is None else Cut(limit), chat, profile.system_fingerprint)
        template = completion._memo.get(key)
        if template is None:
            recorder = IdRecorder()
            marks = {"id": recorder.value("id"), "system_fingerprint": profile.system_fingerprint}
            template = completion._memo[key] = FramesTemplate(_frames(marks, chat, recorder.value("model"), recorder.value("created"), steps, finish))
        values = [json.dumps(request_id).encode(), json.dumps(model).encode(), str(ctx.created).encode()]
        frames = template.fill(values)  # type: ignore[attr-defined]
    else:
        frames = _frames(head, chat, model, ctx.created, steps, finish)
    options = body.get("stream_options")
    if options is not None and not (isinstance(options, dict) and "include_usage" in options):
        # ``self.stream_options["include_usage"]`` raises after the finish chunk: http.server logs
        # the exception and closes the connection; the close-delimited (HTTP/1.0) body just ends,
        # without ``data: [DONE]``.
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames), log=("KeyError: 'include_usage'",))
    if options and options.get("include_usage"):
        usage = {**head, "object": "chat.completion", "model": model, "created": ctx.created, "choices": [], "usage": _usage(ctx, count)}
        frames.append(f"data: {json.dumps(usage)}\n\n".encode())
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _response(
    head: dict[str, Any], chat: bool, stream: bool, model: Any, created: Any, text: str, finish_reason: str | None, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``generate_response``: a chat message or chunk delta, or a text completion's ``text``."""
    obj = ("chat.completion.chunk" if stream else "chat.completion") if chat else "text_completion"
    out: dict[str, Any] = {**head, "object": obj, "model": model, "created": created, "choices": [{"index": 0, "finish_reason": finish_reason}]}
    if usage is not None:
        out["usage"] = usage
    choice = out["choices"][0]
    if chat:
        message: dict[str, Any] = {"role": "assistant"}
        if not stream:
            message["content"] = text or None
        elif text:
            message["content"] = text
        choice["delta" if stream else "message"] = message
    else:
        choice["text"] = text
    return out


def _frames(head: dict[str, Any], chat: bool, model: Any, created: Any, steps: tuple[str, ...], finish: str) -> list[bytes]:
    """A stream's chunks up to its finish chunk: one per token that produced text."""
    frames = [f"data: {json.dumps(_response(head, chat, True, model, created, text, None))}\n\n".encode() for text in steps if text]
    frames.append(f"data: {json.dumps(_response(head, chat, True, model, created, '', finish))}\n\n".encode())
    return frames
