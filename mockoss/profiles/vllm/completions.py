"""``POST /v1/completions`` as vLLM serves it: the raw completion text, no Harmony parsing.

Reproduces ``vllm/entrypoints/openai/completion/serving.py@030ea52e``
(``request_output_to_completion_response`` / ``completion_stream_generator``) with the wire shapes
of ``completion/protocol.py@d5dba2d7`` and the v1 detokenizer
(``vllm/v1/engine/detokenizer.py``): the engine stops after ``<|return|>`` or ``<|call|>`` (the
model's generation-config EOS ids) or after ``max_tokens`` (default 16); the stop token is kept in
``token_ids`` but not detokenized unless ``include_stop_str_in_output``; with
``skip_special_tokens`` (default) other special tokens add no text, without it they appear as
``<|channel|>`` etc. A token that ends inside a UTF-8 character adds no text until the character
is complete (the tokenizers ``DecodeStream``). This is the endpoint for clients and server-side
parsers that work on exact token ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockoss.harmony import load_encoding
from mockoss.harmony.completion import CALL, RETURN
from mockoss.profiles import reply_limit
from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    CompletionsRequestView,
    Reply,
    RequestContext,
)
from mockoss.profiles.reply_limit import reply_too_big, wire_bytes
from mockoss.profiles.wire import dumps as _dumps
from mockoss.schemas.completions import PromptIds

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["RawOutput", "raw_output", "surface_completions", "token_texts"]

_DONE = b"data: [DONE]\n\n"


def token_texts(tokens: tuple[int, ...], skip_special_tokens: bool) -> tuple[str, ...]:
    """The text each token adds when detokenized incrementally (one entry per token).

    Special tokens add ``""`` with ``skip_special_tokens``, else their text; bytes of an
    unfinished UTF-8 character are held back and added with the token that completes it (or,
    lossily, at the end).
    """
    encoding = load_encoding()
    out: list[str] = []
    pending: list[int] = []
    for token in tokens:
        if encoding.is_special_token(token):
            held = encoding.decode(pending) if pending else ""
            pending = []
            out.append(held + ("" if skip_special_tokens else encoding.decode([token])))
            continue
        pending.append(token)
        try:
            out.append(encoding.decode_utf8(pending))
            pending = []
        except Exception:  # noqa: BLE001  # openai_harmony.HarmonyError: incomplete UTF-8 sequence
            out.append("")
    if pending and out:
        out[-1] += encoding.decode(pending)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class RawOutput:
    """What the engine returns for one completion under one set of detokenizer options.

    Attributes:
        token_ids: emitted token ids, the stop token included.
        texts: per-token text deltas (``""`` for the skipped stop token).
        finish_reason: ``stop`` or ``length``.
        stop_reason: 200012 after ``<|call|>``; ``None`` after ``<|return|>`` (the tokenizer's EOS)
            or on ``length``.
    """

    token_ids: tuple[int, ...]
    texts: tuple[str, ...]
    finish_reason: str
    stop_reason: int | None

    @property
    def text(self) -> str:
        return "".join(self.texts)


def raw_output(completion: Completion, max_tokens: int | None, skip_special: bool, include_stop: bool) -> RawOutput:
    """Memoised :class:`RawOutput` of ``completion``."""
    max_tokens = completion.cap(max_tokens)  # every limit that does not cut the answer shares an output
    key = ("vllm.completions", max_tokens, skip_special, include_stop)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    tokens = emission.tokens
    stopped = emission.finish_reason == "stop" and bool(tokens) and tokens[-1] in (RETURN, CALL)
    if stopped and not include_stop:
        texts = (*token_texts(tokens[:-1], skip_special), "")
    else:
        texts = token_texts(tokens, skip_special)
    stop_reason = CALL if stopped and tokens[-1] == CALL else None
    result = RawOutput(tokens, texts, emission.finish_reason, stop_reason)
    completion._memo[key] = result
    return result


def _usage(prompt: int, completion: int) -> str:
    return f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion}}}'


def _prompt_text(prompt: str | tuple[int, ...], return_token_ids: bool) -> str:
    """``final_res.prompt`` for echo (``""`` with ``return_token_ids``, which skips detokenizing)."""
    if return_token_ids:
        return ""
    return prompt if isinstance(prompt, str) else load_encoding().decode(list(prompt))


def _choice_tail(out: RawOutput, request: CompletionsRequestView, prompt: str | tuple[int, ...], ids: PromptIds) -> str:
    """A non-streamed choice's JSON after ``{"index":N`` (the same for every equal prompt)."""
    prompt_ids = ids(prompt) if request.return_token_ids else None
    text = out.text
    if request.echo:
        text = _prompt_text(prompt, request.return_token_ids) + (text if request.max_tokens != 0 else "")
    return _dumps(
        {
            "text": text,
            "logprobs": None,
            "finish_reason": out.finish_reason,
            "stop_reason": out.stop_reason,
            "token_ids": list(out.token_ids) if request.return_token_ids else None,
            "prompt_logprobs": None,
            "prompt_token_ids": list(prompt_ids) if prompt_ids is not None else None,
        }
    )[1:]  # without its "{": the index comes first


def _full(
    profile: VllmProfile, out: RawOutput, request: CompletionsRequestView, ctx: RequestContext
) -> Reply:
    """The JSON reply (see :func:`surface_completions`), built as text: each distinct prompt's
    choice is written once and repeated with its index (``_dumps`` of the whole body wrote the
    same bytes; ``tests/server/test_isolation_leftovers.py`` compares). The choices' UTF-8 bytes
    are counted against the bound as they are joined (:func:`~mockoss.profiles.reply_limit.wire_bytes`,
    once per distinct choice)."""
    digits, limit = profile.id_digits, reply_limit.MAX_REPLY_BYTES  # read per request: a test may lower it
    ids = PromptIds()
    tails: dict[str | tuple[int, ...] | None, tuple[str, int]] = {}  # a choice's JSON after its index; bytes to add
    per_prompt = bool(request.echo or request.return_token_ids)  # else every choice is the same
    choices: list[str] = []
    size = 0
    for index, prompt in enumerate(request.prompts):
        key = prompt if per_prompt else None
        found = tails.get(key)
        if found is None:
            tail = _choice_tail(out, request, prompt, ids)
            found = tails[key] = (tail, wire_bytes(tail) - len(tail) + 1)  # its UTF-8 bytes over its length; a comma
        tail, extra = found
        choice = f'{{"index":{index},{tail}'
        size += len(choice) + extra  # '{"index":N,' is ASCII
        if size > limit:
            return profile.error(400, reply_too_big(len(request.prompts), size, limit))
        choices.append(choice)
    generated = len(out.token_ids) * len(request.prompts)
    head = {
        "id": ctx.ids.next16("cmpl-") if digits == 16 else ctx.ids.next("cmpl-"),
        "object": "text_completion",
        "created": ctx.created,
        "model": request.model,
    }
    usage = {
        "prompt_tokens": ctx.prompt_tokens,
        "total_tokens": ctx.prompt_tokens + generated,
        "completion_tokens": generated,
        "prompt_tokens_details": None,
    }
    body = (
        f'{_dumps(head)[:-1]},"choices":[{",".join(choices)}],"service_tier":null,"system_fingerprint":null,'
        f'"usage":{_dumps(usage)},"kv_transfer_params":null}}'
    )
    return Reply(status=200, body=body.encode())


def _frame_tails(out: RawOutput, request: CompletionsRequestView, prompt: str | tuple[int, ...], ids: PromptIds) -> tuple[bytes, ...]:
    """One prompt's stream frames, each after its ``{"index":N`` (the same for every equal prompt)."""
    echo, return_ids = request.echo, request.return_token_ids
    need_ids = echo or return_ids or request.continuous_usage_stats
    prompt_ids = ids(prompt) if need_ids else ()
    own_prompt = len(prompt_ids)
    last = len(out.token_ids) - 1
    tails: list[bytes] = []
    for position, token in enumerate(out.token_ids):
        text = out.texts[position]
        first_ids = "null"
        if position == 0 and (echo or return_ids):
            first_ids = _dumps(list(prompt_ids))
            if echo:
                text = _prompt_text(prompt, return_ids) + text
        finish, stop = "null", "null"
        if position == last:
            finish = f'"{out.finish_reason}"'
            stop = "null" if out.stop_reason is None else str(out.stop_reason)
        token_ids = f"[{token}]" if return_ids else "null"
        usage = ',"usage":' + _usage(own_prompt, position + 1) if request.continuous_usage_stats else ""
        tails.append(
            (
                f',"text":{_dumps(text)},"logprobs":null,"finish_reason":{finish},'
                f'"stop_reason":{stop},"prompt_token_ids":{first_ids},"token_ids":{token_ids}}}]{usage}}}\n\n'
            ).encode()
        )
    return tuple(tails)


def _stream(
    profile: VllmProfile, out: RawOutput, request: CompletionsRequestView, ctx: RequestContext
) -> Reply:
    """The SSE reply (see :func:`surface_completions`): every prompt's frames in prompt order.

    Each distinct prompt's frames are written once, after their ``{"index":N``, and joined to
    each index; the size of the whole stream is summed before any frame is joined, so a batch
    whose stream would be over :data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES` costs no
    more than its distinct prompts' frames."""
    digits, limit = profile.id_digits, reply_limit.MAX_REPLY_BYTES  # read per request: a test may lower it
    head = (
        f'data: {{"id":"{ctx.ids.next16("cmpl-") if digits == 16 else ctx.ids.next("cmpl-")}","object":"text_completion","created":{ctx.created},'
        f'"model":{_dumps(request.model)},"choices":['
    )
    opening = (head + '{"index":').encode()
    ids = PromptIds()
    per_prompt = bool(request.echo or request.return_token_ids or request.continuous_usage_stats)
    tails_of: dict[str | tuple[int, ...] | None, tuple[tuple[bytes, ...], int]] = {}
    chosen: list[tuple[bytes, ...]] = []
    count = len(out.token_ids)
    size = 0
    for index, prompt in enumerate(request.prompts):
        key = prompt if per_prompt else None
        found = tails_of.get(key)
        if found is None:
            tails = _frame_tails(out, request, prompt, ids)
            found = tails_of[key] = (tails, sum(map(len, tails)))  # encoded frames: their bytes as sent
        size += found[1] + count * (len(opening) + len(str(index)))
        if size > limit:
            return profile.error(400, reply_too_big(len(request.prompts), size, limit))
        chosen.append(found[0])
    frames = [opening + str(index).encode() + tail for index, tails in enumerate(chosen) for tail in tails]
    if request.include_usage:
        generated = count * len(request.prompts)
        frames.append((head + '],"usage":' + _usage(ctx.prompt_tokens, generated) + "}\n\n").encode())
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def surface_completions(
    profile: VllmProfile, completion: Completion, request: CompletionsRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as vLLM's ``/v1/completions`` reply, JSON or SSE.

    Non-streamed (HTTP 200)::

        {"id":"cmpl-<16hex>","object":"text_completion","created":…,"model":…,
         "choices":[{"index":0,"text":…,"logprobs":null,"finish_reason":"stop"|"length",
           "stop_reason":200012|null,"token_ids":[…]|null,"prompt_logprobs":null,
           "prompt_token_ids":[…]|null}],"service_tier":null,"system_fingerprint":null,
         "usage":{"prompt_tokens":P,"total_tokens":P+C,"completion_tokens":C,
           "prompt_tokens_details":null},"kv_transfer_params":null}

    ``P`` is the prompt tokenized with o200k_harmony, special tokens allowed. One choice per prompt
    (each plays the same scripted completion). ``echo`` prefixes the prompt text.

    Streamed (``data: {chunk}\\n\\n`` … ``data: [DONE]\\n\\n``, ``model_dump_json(exclude_unset=True)``):
    one chunk per generated token, ``{"index","text","logprobs":null,"finish_reason",
    "stop_reason","prompt_token_ids","token_ids"}`` (``prompt_token_ids`` on the first chunk with
    ``return_token_ids`` or ``echo``, ``token_ids`` ``[id]`` with ``return_token_ids``); the last
    token's chunk carries ``finish_reason``/``stop_reason``; ``stream_options.include_usage``
    (default true once ``stream_options`` is sent) adds a ``"choices":[]`` usage chunk,
    ``continuous_usage_stats`` running usage on every chunk. ``logprobs`` are not emulated
    (always ``null``).

    A reply (the JSON body, or all frames together) over
    :data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES` is not built: a 400 in vLLM's error
    shape says so (mockoss's limit, not vLLM's).
    """
    out = raw_output(completion, request.max_tokens or None, request.skip_special_tokens, request.include_stop_str_in_output)
    if request.max_tokens == 0:  # echo only: vLLM returns the prompt and no generated text
        out = RawOutput((), (), "length", None)
    # ids: cmpl-<random_uuid()>, 16 hex digits in 0.32/0.33 (switch id_digits).
    if request.stream:
        return _stream(profile, out, request, ctx)
    return _full(profile, out, request, ctx)
