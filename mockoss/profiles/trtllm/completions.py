"""``POST /v1/completions`` as ``trtllm-serve`` answers it for gpt-oss: raw text in, raw text out.

Read from NVIDIA/TensorRT-LLM, the versions the search tool's index stores:
``tensorrt_llm/serve/openai_server.py`` ``openai_completion`` (one ``generate_async`` per prompt;
``merge_completion_responses``; ``completion_generator`` and ``generator_wrapper``, which ends the
stream with ``data: [DONE]``), ``postprocess_handlers.py`` ``completion_response_post_processor``
and ``completion_stream_post_processor`` (the stored version with ``ChatCompletionPostprocArgs``,
and the newest, with ``_ensure_stream_metadata``), ``openai_protocol.py`` ``CompletionRequest``,
``CompletionResponse``, ``CompletionResponseChoice``, ``CompletionStreamResponse``, ``StreamOptions``
and ``UsageInfo`` (the stored version with ``prompt_token_ids`` on the response), ``llmapi/tokenizer.py``
``decode_incrementally`` and ``sampling_params.py`` ``_setup``. The two post-processor versions
also run: ``tools/trtllm_completions_diff.py`` gives them this module's engine emulation (protocol
models stubbed) and compares the period's with ``trtllm@2025.09.19``, the newest with the
defaults: 11,232 replies each, 8,424 streamed, 0 differ (ids by order of appearance). The engine
and the detokenizer are not checked by it.

* No Harmony parser runs on this route: the prompt is tokenized as text (special tokens parsed) and
  the output detokenized. ``skip_special_tokens`` is true unless the request says otherwise (nothing
  turns it off for gpt-oss, unlike ``chat_harmony``), so the markup goes and the channel names run
  into the text: ``analysisThink.assistantfinalHi``. With ``skip_special_tokens: false`` the markup
  stays. ``detokenize: false`` sends ``text: ""`` and the ``token_ids``.
* Stops: ``<|return|>`` is the tokenizer's end id (not output, not counted, ``stop_reason`` null).
  With ``generation_config_stops`` (PR #9514: generation_config's ``eos_token_id`` list,
  ``[200002, 199999, 200012]`` for gpt-oss, becomes ``stop_token_ids``) ``<|call|>`` and
  ``<|endoftext|>`` stop the engine as stop words: trimmed (kept with ``include_stop_str_in_output``),
  ``stop_reason`` their id. Before it nothing but the end id stops the engine; mockoss ends the
  generation where the script ends (``<|call|>`` kept in the output), which the real engine would
  not do. ``max_tokens`` has no default (the engine's limit): the whole script plays.
* Non-streamed: ``JSONResponse(model_dump())``, every field in the model's order, nulls included;
  ``id`` ``cmpl-`` + 32 hex digits; usage counts the output tokens, with ``prompt_tokens_details:
  {"cached_tokens": 0}`` (``null`` with ``completion_cached_tokens`` off, as an older stored version). Several prompts: one generation
  each (each plays the scripted completion), choices concatenated, usage summed,
  ``prompt_token_ids: []``; the merged reply names the server's model (here: the request's).
* Streamed: one chunk per engine response (``stream_interval`` tokens, plus the end id's own
  iteration), its text whatever the Hugging Face ``DecodeStream`` releases (text ending in U+FFFD,
  a character cut in two, waits; a special token skipped adds nothing; an empty ``text`` chunk is
  still sent), ``model_dump_json()`` whole (``"usage":null``). ``stream_options`` defaults to
  ``include_usage`` *and* ``continuous_usage_stats`` true (TensorRT-LLM's ``StreamOptions``): each
  chunk then carries the usage so far, and a usage chunk (``choices: []``) ends the stream;
  without ``stream_options`` there is no usage at all. ``completion_usage_chunk``: the stored
  version of the Harmony period builds that chunk as a ``ChatCompletionStreamResponse``
  (``chatcmpl-`` id, ``object: "chat.completion.chunk"``), the newest as ``CompletionStreamResponse``
  with the stream's id; which PR changed it is unknown (a switch, dated with PR #14708).
* Errors (400, ``create_error_response``): ``logprobs`` (the period's ``check_logprobs``: "not
  supported"; newer versions return logprobs, which mockoss does not emulate), ``suffix``;
  ``echo`` with a token-id prompt raises ``TypeError`` joining a list and a string, so
  ``openai_completion`` answers 400 with Python's words (streamed too: mockoss answers before the
  stream starts; the real server fails inside it).
* Known differences: a stable stream id is ``cmpl-`` + 32 hex digits here, the executor's integer
  request id in trtllm-serve (``f"cmpl-{rsp.id}"``), as for chat; ``avg_decoded_tokens_per_iter``
  is null (no speculative decoding); logprobs, ``n`` > 1 and ``best_of`` are not emulated; several
  streamed prompts come one after the other (the server interleaves them as they are generated).
* mockoss's own limit: a reply over :data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES` (a
  batch of thousands of prompts) is a 400 with its message, not built (issue 9, memory bounded in
  bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any

from mockoss.profiles import reply_limit
from mockoss.profiles.base import SSE_MEDIA_TYPE, CompletionsRequestView, Reply, RequestContext
from mockoss.profiles.reply_limit import reply_too_big, wire_bytes
from mockoss.profiles.sse import SseEvents
from mockoss.profiles.trtllm.chat import engine_batches, usage_info
from mockoss.profiles.trtllm.completions_bound import digit_sum as _digit_sum
from mockoss.profiles.trtllm.completions_bound import over_bound as _over_bound
from mockoss.profiles.trtllm.completions_bound import placeholder_id as _placeholder_id
from mockoss.profiles.trtllm.completions_engine import EngineOutput, detokenized, engine_output, kept_ids, stream_texts
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["EngineOutput", "engine_output", "kept_ids", "stream_texts", "surface_completions"]

_DONE = b"data: [DONE]\n\n"


def _checks(request: CompletionsRequestView) -> str | None:
    body = request.body
    if body.get("logprobs"):
        return "Value error, logprobs is not supported"
    if body.get("suffix"):
        return "Value error, suffix is not supported"
    if request.echo and any(isinstance(p, tuple) for p in request.prompts):
        return 'can only concatenate list (not "str") to list'
    return None


def _prompt_counts(request: CompletionsRequestView, ctx: RequestContext) -> list[int]:
    if len(request.prompts) == 1:
        return [ctx.prompt_tokens]
    from mockoss.schemas.completions import PromptIds

    ids = PromptIds()  # each distinct prompt tokenized once (a batch often repeats one)
    return [len(ids(p)) for p in request.prompts]


def surface_completions(profile: TrtllmProfile, completion: Completion, request: CompletionsRequestView, ctx: RequestContext) -> Reply:
    """trtllm-serve's reply to ``POST /v1/completions`` for ``completion``; see the module docstring.

    Non-streamed, the reply's UTF-8 bytes are counted against
    :data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES`: one prompt's whole body once written,
    a batch's choice by choice (:func:`_batch`)."""
    problem = _checks(request)
    if problem is not None:
        return profile.error(400, problem)
    body = request.body
    limit = body.get("max_tokens")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    keep_stop = bool(body.get("include_stop_str_in_output"))
    out = engine_output(completion, limit, config_stops=profile.generation_config_stops, keep_stop=keep_stop)
    shape = (completion.cap(limit), profile.generation_config_stops, keep_stop)  # what out is of
    skip = body.get("skip_special_tokens", True) is not False
    detokenize = body.get("detokenize", True) is not False
    counts = _prompt_counts(request, ctx)
    details = profile.completion_cached_tokens
    if request.stream:
        return _stream(profile, out, request, ctx, counts, skip=skip, detokenize=detokenize, completion=completion, shape=shape)
    text = detokenized(completion, out, shape, skip) if detokenize else ""
    bound = reply_limit.MAX_REPLY_BYTES  # read per request (serve --max-reply-bytes; a test may lower it)
    if len(request.prompts) == 1:  # one choice: the body is written whole (as big as the prompt and completion), then counted
        prompt = request.prompts[0]
        usage = usage_info(counts[0], [len(out.tokens)], details=details)
        reply = {"id": ctx.ids.next("cmpl-"), "object": "text_completion", "created": ctx.created, "model": request.model,
                 "choices": [_choice(0, str(prompt) + text if request.echo else text, out, detokenize)], "usage": usage,
                 "prompt_token_ids": None}
        sent = dumps(reply).encode()
        if len(sent) > bound:
            return profile.error(400, reply_too_big(1, len(sent), bound))
        return Reply(status=200, body=sent)
    return _batch(profile, out, request, ctx, text, sum(counts), detokenize=detokenize, bound=bound)


def _choice(index: int, text: str, out: EngineOutput, detokenize: bool) -> dict[str, Any]:
    """A non-streamed ``CompletionResponseChoice``, every field in the model's order."""
    return {
        "index": index, "text": text if detokenize else "", "token_ids": None if detokenize else list(out.tokens),
        "logprobs": None, "context_logits": None, "finish_reason": out.finish_reason, "stop_reason": out.stop_reason,
        "disaggregated_params": None, "avg_decoded_tokens_per_iter": None,
    }


def _batch(
    profile: TrtllmProfile, out: EngineOutput, request: CompletionsRequestView, ctx: RequestContext, text: str,
    prompt_tokens: int, *, detokenize: bool, bound: int,
) -> Reply:
    """The non-streamed reply to several prompts, written choice by choice: each distinct prompt's
    choice once, kept after its ``{"index":N,`` and joined to each later index, then set between the
    brackets of the reply's ``"choices":[]``. The same bytes :func:`dumps` of the whole reply writes
    (``tests/server/test_reply_bytes.py`` compares); each choice's UTF-8 bytes are counted against
    ``bound`` as it is written, so a batch over it stops there."""
    per_prompt = request.echo and detokenize  # else every choice is the same but its index
    tails: dict[str | tuple[int, ...] | None, tuple[str, int]] = {}
    choices: list[str] = []
    size = 0
    for index, prompt in enumerate(request.prompts):
        key = prompt if per_prompt else None
        found = tails.get(key)
        if found is None:
            choice = dumps(_choice(index, str(prompt) + text if per_prompt else text, out, detokenize))
            cost = wire_bytes(choice)
            cut = len(str(index)) + 10  # its '{"index":N,' (ASCII)
            tails[key] = (choice[cut:], cost - len(choice))
        else:
            choice = f'{{"index":{index},{found[0]}'
            cost = len(choice) + found[1]
        size += cost + 1  # and a comma
        if size > bound:
            return profile.error(400, reply_too_big(len(request.prompts), size, bound))
        choices.append(choice)
    n = len(choices)
    usage = usage_info(prompt_tokens, [len(out.tokens)] * n, details=profile.completion_cached_tokens)
    frame = dumps({"id": ctx.ids.next("cmpl-"), "object": "text_completion", "created": ctx.created, "model": request.model,
                   "choices": [], "usage": usage, "prompt_token_ids": [] if n > 1 else None})
    # The first '"choices":[]' is that key's: the keys before it are fixed, a string value escapes its quotes.
    at = frame.index('"choices":[]') + len('"choices":[')
    return Reply(status=200, body="".join((frame[:at], ",".join(choices), frame[at:])).encode())


def _stream_options(body: Any) -> tuple[bool, bool]:
    """``(include_usage, continuous_usage_stats)``: TensorRT-LLM's ``StreamOptions`` defaults both
    to true; no ``stream_options``, no usage."""
    options = body.get("stream_options")
    if not isinstance(options, dict):
        return False, False
    usage = bool(options.get("include_usage", True))
    return usage, usage and bool(options.get("continuous_usage_stats", True))


def _stream_pieces(
    completion: Completion, out: EngineOutput, shape: tuple[Any, ...], interval: int, *, skip: bool, detokenize: bool,
) -> tuple[list[tuple[int, int, bool]], list[str], tuple[bytes, ...]]:
    """``(bounds, texts, rests)``: the engine responses' token slices, their ``text_diff`` and each
    response's choice as prompt 0 without echo sends it, from after ``{"index":0,`` to the end of
    ``choices`` (``…}]``), UTF-8. They depend on the completion and the request's shape only:
    memoised on the completion."""
    key = ("trtllm.completions.stream", *shape, interval, skip, detokenize)
    cached = completion._memo.get(key)
    if cached is None:
        bounds = engine_batches(len(out.emitted), len(out.tokens), interval)
        texts = stream_texts(out.tokens, bounds, skip_special=skip)
        rests = tuple((_stream_choice(0, text, out, start, stop, done, detokenize)[_AFTER_INDEX:] + "]").encode() for (start, stop, done), text in zip(bounds, texts, strict=True))
        cached = (bounds, texts, rests)
        completion._memo[key] = cached
    return cached  # type: ignore[return-value]


_AFTER_INDEX = len('{"index":0,')


def _stream_choice(index: int, text: str, out: EngineOutput, start: int, stop: int, done: bool, detokenize: bool) -> str:
    """A streamed ``CompletionResponseStreamChoice`` as JSON."""
    return dumps({
        "index": index, "text": text if detokenize else "", "token_ids": None if detokenize else list(out.tokens[start:stop]),
        "logprobs": None, "finish_reason": out.finish_reason if done else None,
        "stop_reason": out.stop_reason if done else None, "avg_decoded_tokens_per_iter": None,
    })


def _usage_json(prompt: int, completion: int, details: bool) -> str:
    """``dumps(usage_info(prompt, [completion], details=details))`` for counts ≥ 0, written directly."""
    return f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion},"prompt_tokens_details":{_DETAILS if details else "null"}}}'


_DETAILS = '{"cached_tokens":0}'


def _stream(
    profile: TrtllmProfile, out: EngineOutput, request: CompletionsRequestView, ctx: RequestContext, counts: list[int],
    *, skip: bool, detokenize: bool, completion: Completion, shape: tuple[Any, ...],
) -> Reply:
    """``completion_stream_post_processor`` per engine response, prompt after prompt, then ``[DONE]``.

    The engine responses' texts and choices are memoised per request shape (:func:`_stream_pieces`);
    a request writes each frame's id, ``created``, ``model``, index and usage around them.

    A batch is sized before its frames are built (:func:`_over_bound`): a reply over
    :data:`~mockoss.profiles.reply_limit.MAX_REPLY_BYTES` is refused with the same 400 as the
    per-prompt check below gives, without building the frames (issue 9 review, finding 6: 127
    prompts of a 3,000-word answer built ~35 MB of frames on the event loop, 436-520 ms, to answer
    that 400)."""
    bounds, texts, rests = _stream_pieces(completion, out, shape, profile.stream_interval, skip=skip, detokenize=detokenize)
    include_usage, continuous = _stream_options(request.body)
    details = profile.completion_cached_tokens
    model = dumps(request.model)
    bound = reply_limit.MAX_REPLY_BYTES

    def build(index: int, prompt: Any, prompt_tokens: int, next_id: Callable[[str], str]) -> list[bytes]:
        stream_id = next_id("cmpl-") if profile.stable_stream_ids else None
        after = f'"object":"text_completion","created":{ctx.created},"model":{model},"choices":[{{"index":{index},'.encode()
        pieces = rests
        if request.echo:  # the first response's text follows the prompt
            start, stop, done = bounds[0]
            pieces = ((_stream_choice(0, str(prompt) + texts[0], out, start, stop, done, detokenize)[_AFTER_INDEX:] + "]").encode(), *rests[1:])
        if stream_id is not None and not continuous:
            head, end = f'data: {{"id":"{stream_id}",'.encode() + after, b',"usage":null}\n\n'
            frames = list(map(b"".join, zip(repeat(head), pieces, repeat(end))))  # one C-level loop per frame
        else:
            frames = []
            for rest, (_start, stop, _done) in zip(pieces, bounds, strict=True):
                end = f',"usage":{_usage_json(prompt_tokens, stop, details)}}}\n\n'.encode() if continuous else b',"usage":null}\n\n'
                frames.append(f'data: {{"id":"{stream_id or next_id("cmpl-")}",'.encode() + after + rest + end)
        if include_usage:
            usage = _usage_json(prompt_tokens, len(out.tokens), details)
            if profile.completion_usage_chunk == "chat_chunk":
                opening = f'"id":"{next_id("chatcmpl-")}","object":"chat.completion.chunk"'
            else:
                opening = f'"id":"{stream_id or next_id("cmpl-")}","object":"text_completion"'
            frames.append(f'data: {{{opening},"created":{ctx.created},"model":{model},"choices":[],"usage":{usage}}}\n\n'.encode())
        return frames

    def prompt_zero_bytes() -> int:
        """``sum(map(len, build(0, prompts[0], counts[0], …)))`` without building the frames: each
        frame is the compact JSON of a flat choice and usage, whose variable members (text,
        token ids, usage numbers) are counted, the rest measured once on one frame of each kind."""
        n = len(bounds)
        frame = lambda done, usage: len(  # a frame with text "", token_ids null and this usage text
            f'data: {{"id":"{_placeholder_id("cmpl-")}","object":"text_completion","created":{ctx.created},"model":{model},'
            f'"choices":[{dumps({"index": 0, "text": "", "token_ids": None, "logprobs": None, "finish_reason": out.finish_reason if done else None, "stop_reason": out.stop_reason if done else None, "avg_decoded_tokens_per_iter": None})}],"usage":{usage}}}\n\n'.encode()
        ) - 6  # the empty text's and null token_ids' bytes, counted below
        dones = sum(1 for _s, _t, done in bounds if done)
        total = frame(True, "") * dones + frame(False, "") * (n - dones)
        if detokenize:
            echoed = str(request.prompts[0]) if request.echo else ""
            total += len(dumps(echoed + "".join(texts)).encode()) - 2 + 2 * n + 4 * n  # JSON escapes character by character
        else:
            total += 2 * n + sum(2 + sum(len(str(t)) for t in out.tokens[a:z]) + max(0, z - a - 1) for a, z, _d in bounds)
        if continuous:
            plain = len(dumps(usage_info(0, [0], details=details))) - 3  # its three numbers are "0"
            stops = [stop for _a, stop, _d in bounds]
            count = counts[0]
            total += n * (plain + len(str(count))) + _digit_sum(count, sorted(stops)) + _digit_sum(0, sorted(stops))
        else:
            total += 4 * n  # "null"
        if include_usage:  # the usage chunk, built as the stream builds it
            usage = dumps(usage_info(counts[0], [len(out.tokens)], details=details))
            if profile.completion_usage_chunk == "chat_chunk":
                head = f'"id":"{_placeholder_id("chatcmpl-")}","object":"chat.completion.chunk"'
            else:
                head = f'"id":"{_placeholder_id("cmpl-")}","object":"text_completion"'
            total += len(f'data: {{{head},"created":{ctx.created},"model":{model},"choices":[],"usage":{usage}}}\n\n'.encode())
        return total

    if len(request.prompts) > 1:
        reference = prompt_zero_bytes()
        stops = sorted(stop for _start, stop, _done in bounds) if continuous else []
        over = _over_bound(request.prompts, counts, reference, len(bounds), stops, len(out.tokens) if include_usage else None,
                           echo=bool(request.echo and detokenize), bound=bound)
        if over is not None:
            return profile.error(400, reply_too_big(len(request.prompts), over, bound))
    frames: list[bytes] = []
    size = 0
    for index, (prompt, prompt_tokens) in enumerate(zip(request.prompts, counts, strict=True)):
        built = build(index, prompt, prompt_tokens, ctx.ids.next)
        frames += built
        size += sum(map(len, built))
        if size > bound:  # checked per prompt: the frames built are at most one prompt's over the bound
            return profile.error(400, reply_too_big(len(request.prompts), size, bound))
    frames.append(_DONE)
    # every frame is "data: " and compact JSON (newlines escaped) then "\n\n"
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=SseEvents(frames))
