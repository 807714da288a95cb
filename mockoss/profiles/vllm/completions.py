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
from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    CompletionsRequestView,
    Reply,
    RequestContext,
)
from mockoss.profiles.wire import dumps as _dumps
from mockoss.schemas.completions import prompt_token_ids

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
        except Exception:  # openai_harmony.HarmonyError: incomplete UTF-8 sequence
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


def _full(out: RawOutput, request: CompletionsRequestView, ctx: RequestContext, digits: int = 32) -> Reply:
    choices = []
    for index, prompt in enumerate(request.prompts):
        ids = prompt_token_ids(prompt) if request.return_token_ids else None
        text = out.text
        if request.echo:
            text = _prompt_text(prompt, request.return_token_ids) + (text if request.max_tokens != 0 else "")
        choices.append(
            {
                "index": index,
                "text": text,
                "logprobs": None,
                "finish_reason": out.finish_reason,
                "stop_reason": out.stop_reason,
                "token_ids": list(out.token_ids) if request.return_token_ids else None,
                "prompt_logprobs": None,
                "prompt_token_ids": list(ids) if ids is not None else None,
            }
        )
    generated = len(out.token_ids) * len(request.prompts)
    body = {
        "id": ctx.ids.next16("cmpl-") if digits == 16 else ctx.ids.next("cmpl-"),
        "object": "text_completion",
        "created": ctx.created,
        "model": request.model,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": None,
        "usage": {
            "prompt_tokens": ctx.prompt_tokens,
            "total_tokens": ctx.prompt_tokens + generated,
            "completion_tokens": generated,
            "prompt_tokens_details": None,
        },
        "kv_transfer_params": None,
    }
    return Reply(status=200, body=_dumps(body).encode())


def _stream(out: RawOutput, request: CompletionsRequestView, ctx: RequestContext, digits: int = 32) -> Reply:
    head = (
        f'data: {{"id":"{ctx.ids.next16("cmpl-") if digits == 16 else ctx.ids.next("cmpl-")}","object":"text_completion","created":{ctx.created},'
        f'"model":{_dumps(request.model)},"choices":['
    )
    prompt_tokens = ctx.prompt_tokens
    frames: list[bytes] = []
    last = len(out.token_ids) - 1
    for index, prompt in enumerate(request.prompts):
        ids = prompt_token_ids(prompt)
        own_prompt = len(ids)
        for position, token in enumerate(out.token_ids):
            text = out.texts[position]
            prompt_ids = "null"
            if position == 0 and (request.echo or request.return_token_ids):
                prompt_ids = _dumps(list(ids))
                if request.echo:
                    text = _prompt_text(prompt, request.return_token_ids) + text
            finish, stop = "null", "null"
            if position == last:
                finish = f'"{out.finish_reason}"'
                stop = "null" if out.stop_reason is None else str(out.stop_reason)
            token_ids = f"[{token}]" if request.return_token_ids else "null"
            choice = (
                f'{{"index":{index},"text":{_dumps(text)},"logprobs":null,"finish_reason":{finish},'
                f'"stop_reason":{stop},"prompt_token_ids":{prompt_ids},"token_ids":{token_ids}}}'
            )
            usage = ""
            if request.continuous_usage_stats:
                usage = ',"usage":' + _usage(own_prompt, position + 1)
            frames.append((head + choice + "]" + usage + "}\n\n").encode())
    if request.include_usage:
        generated = len(out.token_ids) * len(request.prompts)
        frames.append((head + '],"usage":' + _usage(prompt_tokens, generated) + "}\n\n").encode())
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
    """
    out = raw_output(completion, request.max_tokens or None, request.skip_special_tokens, request.include_stop_str_in_output)
    if request.max_tokens == 0:  # echo only: vLLM returns the prompt and no generated text
        out = RawOutput((), (), "length", None)
    # ids: cmpl-<random_uuid()>, 16 hex digits in 0.32/0.33 (switch id_digits).
    if request.stream:
        return _stream(out, request, ctx, profile.id_digits)
    return _full(out, request, ctx, profile.id_digits)
