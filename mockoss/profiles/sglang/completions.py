"""``POST /v1/completions`` as SGLang serves gpt-oss (sgl-project/sglang@v0.5.23): raw text out.

Read from, and checked against by running (``tools/sglang_serving_diff.py``),
``python/sglang/srt/entrypoints/openai/serving_completions.py`` (``_build_completion_response``,
``_generate_completion_stream``, ``_get_echo_text``, ``_prepare_echo_prompts``), ``protocol.py``
(``CompletionRequest``: ``max_tokens`` 16, ``skip_special_tokens`` true) and
``managers/detokenizer_manager.py`` (``trim_matched_stop``):

* No parser runs: the text is the detokenized output. ``skip_special_tokens`` is the request's
  (true unless sent; unlike chat, nothing forces it off for gpt-oss), so Harmony markup is cut out
  and the channel names run into the text: ``analysisUser asks…assistantfinal2 + 2 = 4.``. With
  ``skip_special_tokens: false`` the markup stays, the matched stop token trimmed
  (``<|return|>``, ``<|call|>``; ``<|call|>`` kept with ``--tool-call-parser gpt-oss``, and every
  stop token with ``no_stop_trim``).
* ``id`` is the bare request id (32 hex digits), ``matched_stop`` the stop token id,
  ``metadata: {"weight_version": "default"}``; usage counts the prompt as tokenized (special
  tokens in the prompt text are parsed as such), ``reasoning_tokens`` 0.
* Streamed: one chunk per decode step (its text from :mod:`.detokenizer`), text or not (a special token's step carries ``""``), every
  chunk with ``usage: null`` (the usage so far with ``continuous_usage_stats``), the finish chunk
  with ``matched_stop``, the usage chunk (``choices: []``, null fields left out) with
  ``include_usage``, then ``data: [DONE]``. ``echo`` prefixes the prompt (a token prompt decoded
  with special tokens skipped).
* Not emulated: several prompts or ``n`` > 1 (the first prompt is answered), logprobs. Known
  difference: an empty string prompt is refused by mockoss's shared request schema (400, its own
  words) before SGLang's ``Prompt cannot be empty`` check; ``[""]`` gets SGLang's reply.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import SSE_MEDIA_TYPE, CompletionsRequestView, Reply, RequestContext
from mockoss.profiles.sglang.chat import CALL
from mockoss.profiles.sglang.detokenizer import FIRST_SPECIAL, stream_deltas
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.sglang import SglangProfile

__all__ = ["surface_completions"]

_STOPS = (200002, 200012, 199999)


def _echo(prompt: str | tuple[int, ...]) -> str:
    if isinstance(prompt, str):
        return prompt
    return load_encoding().decode([t for t in prompt if t < FIRST_SPECIAL])


def _usage(prompt: int, completion: int, *, drop_none: bool = False) -> dict[str, Any]:
    usage = {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion,
             "prompt_tokens_details": None, "reasoning_tokens": 0, "completion_tokens_details": None}
    return {k: v for k, v in usage.items() if v is not None} if drop_none else usage


def surface_completions(profile: SglangProfile, completion: Completion, request: CompletionsRequestView, ctx: RequestContext) -> Reply:
    """SGLang's reply to ``POST /v1/completions`` for ``completion``; see the module docstring."""
    if not any(request.prompts):  # _validate_request: create_error_response's flat body
        body = {"object": "error", "message": "Prompt cannot be empty", "type": "BadRequestError", "param": None, "code": 400}
        return Reply(status=400, body=dumps(body).encode())
    emission = completion.emit(request.max_tokens)
    tokens = emission.tokens
    skip = request.skip_special_tokens
    stopped = emission.finish_reason == "stop" and bool(tokens) and tokens[-1] in _STOPS
    matched = tokens[-1] if stopped else None
    keep = bool(request.body.get("no_stop_trim")) or (matched == CALL and profile.tool_call_parser == "gpt-oss")
    text_tokens = tokens[:-1] if stopped and not keep else tokens
    finish = "stop" if stopped or emission.finish_reason == "stop" else "length"
    rid = ctx.ids.next()
    echo = _echo(request.prompts[0]) if request.echo and request.prompts else ""
    model = dumps(request.model)
    if not request.stream:
        text = echo + _text(completion, request.max_tokens, text_tokens, skip)
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish, "matched_stop": matched}
        body = {"id": rid, "object": "text_completion", "created": ctx.created, "model": request.model, "choices": [choice],
                "usage": _usage(ctx.prompt_tokens, len(tokens)), "metadata": {"weight_version": "default"}}
        return Reply(status=200, body=dumps(body).encode())
    steps, deltas, pieces = _stream_pieces(completion, request.max_tokens, tokens, skip, stopped and not keep)
    options = request.body.get("stream_options") if isinstance(request.body.get("stream_options"), dict) else {}
    head = f'data: {{"id":"{rid}","object":"text_completion","created":{ctx.created},"model":{model},"choices":[{{"index":0,"text":'.encode()
    count = len(deltas)
    continuous = options.get("continuous_usage_stats")

    def frame(done: int, delta_json: bytes) -> bytes:
        last = done == count
        usage = dumps(_usage(ctx.prompt_tokens, done)) if continuous else "null"
        tail = f',"logprobs":null,"finish_reason":{dumps(finish if last else None)},"matched_stop":{dumps(matched if last else None)}}}],"usage":{usage}}}\n\n'
        return head + delta_json + tail.encode()

    frames: list[bytes] = []
    if count:
        first = dumps(echo + steps[0]).encode() if echo else deltas[0]
        frames.append(frame(1, first))
    if continuous:
        frames += [frame(done, deltas[done - 1]) for done in range(2, count)]
    else:
        frames += map(b"".join, zip(repeat(head), pieces))
    if count > 1:
        frames.append(frame(count, deltas[-1]))
    if options.get("include_usage") or profile.stream_default_include_usage:  # should_include_usage
        usage = dumps(_usage(ctx.prompt_tokens, len(tokens), drop_none=True))
        frames.append(f'data: {{"id":"{rid}","object":"text_completion","created":{ctx.created},"model":{model},"choices":[],"usage":{usage}}}\n\n'.encode())
    frames.append(b"data: [DONE]\n\n")
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


_MEMO = "sglang.completions"
_NULL_TAIL = b',"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}\n\n'


def _text(completion: Completion, max_tokens: int | None, text_tokens: tuple[int, ...], skip: bool) -> str:
    """The detokenized text of ``text_tokens`` (the emission of ``max_tokens`` with its matched
    stop token trimmed or not, which ``len`` tells), memoised on the completion."""
    key = (_MEMO, "text", completion.cap(max_tokens), len(text_tokens), skip)
    cached = completion._memo.get(key)
    if cached is None:
        kept = [t for t in text_tokens if not (skip and t >= FIRST_SPECIAL)]
        cached = completion._memo[key] = load_encoding().decode(kept) if kept else ""
    return cached  # type: ignore[return-value]


def _stream_pieces(
    completion: Completion, max_tokens: int | None, tokens: tuple[int, ...], skip: bool, trim_last: bool
) -> tuple[tuple[str, ...], tuple[bytes, ...], tuple[bytes, ...]]:
    """Each decode step's text (:func:`~.detokenizer.stream_deltas`), the same as JSON, and the
    frames of the steps between the first and the last after their head (``usage: null``),
    memoised on the completion per (``Completion.cap(max_tokens)``, ``skip_special_tokens``, stop
    trimmed)."""
    key = (_MEMO, "stream", completion.cap(max_tokens), skip, trim_last)
    cached = completion._memo.get(key)
    if cached is None:
        steps = tuple(stream_deltas(tokens, skip_special=skip, trim_last=trim_last))
        deltas = tuple(dumps(step).encode() for step in steps)
        cached = completion._memo[key] = (steps, deltas, tuple(delta + _NULL_TAIL for delta in deltas[1:-1]))
    return cached  # type: ignore[return-value]
