"""``POST /v1/chat/completions`` as Ollama serves gpt-oss (its OpenAI-compatible layer).

Ollama runs the request through its native chat handler and rewrites each NDJSON response
(``ollama/ollama:middleware/openai.go`` ``ChatWriter``, ``openai/openai.go`` ``ToChatCompletion``,
``ToStreamChunks``, ``FinishChunk``, ``ToToolCalls`` at ``fb307609``):

* reasoning is ``message.reasoning`` / ``delta.reasoning`` (not ``reasoning_content``);
* ``tool_calls[].function.arguments`` is the Go JSON of the decoded arguments, as a string
  (``{"a":"\\u003cb\\u003e"}`` for ``<b>``), each call with ``id``, ``index``, ``type``;
* ``finish_reason`` ``stop`` becomes ``tool_calls`` when calls were returned; ``length`` stays;
* ``id`` is ``chatcmpl-`` + ``rand.Intn(999)``, ``system_fingerprint`` ``fp_ollama``, no
  ``logprobs`` key;
* streamed: ``data: {chunk}\\n\\n`` frames; the first chunk carries ``role``; a response with both
  thinking and content (or tool calls) is split into a reasoning chunk and a content chunk; a
  chunk without content still has ``"content":""``; the trailing empty ``done`` response yields no
  chunk; then a finish chunk with an empty delta, a ``choices: []`` usage chunk when
  ``stream_options.include_usage``, and ``data: [DONE]``; every chunk has the first response's
  ``created``;
* non-streamed: ``json.Encoder`` output (a trailing newline), ``Content-Type: application/json``.

When the tool call fails to decode (``error parsing tool call: …``): non-streamed, and streamed
before anything was sent, HTTP 500 ``{"error":{"message":…,"type":"api_error",…}}``; streamed
after the first chunk, Ollama's NDJSON error line is re-read as an empty response, so one more chunk
``{"model":"",…,"delta":{"content":""},…}`` is written and the stream ends without a finish chunk or
``[DONE]`` (the error text never reaches the client; ``server/routes.go`` ``streamResponse``). Ollama
logs nothing about it; the request log (``RecordedRequest.server_log``) gets a ``mockoss:`` line
saying why the stream stopped (:func:`~mockoss.profiles.ollama.errors.stream_cut_note`).

A generation cut by the runner's token-repeat abort (``llm/llama_server.go:1692-1702``,
:mod:`~mockoss.profiles.ollama.repeat`) has no ``done`` response: streamed, the chunks and no
finish chunk, usage chunk or ``[DONE]``; non-streamed, ``finish_reason: null`` and zero usage
(the last response has no metrics), ``created`` the last chunk's.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from typing import TYPE_CHECKING

from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.ollama.errors import openai_error, stream_cut_note
from mockoss.profiles.ollama.generation import Generation, run
from mockoss.profiles.ollama.gojson import quote
from mockoss.profiles.ollama.ids import rand_int, tool_call_id
from mockoss.profiles.ollama.native import UNEXPECTED_ERROR_FORMAT, encoded_chunks
from mockoss.profiles.ollama.repeat import REPEAT_NOTE, wrong_key
from mockoss.profiles.ollama.requests import chat_prefill, chat_tool_names, max_tokens_of
from mockoss.profiles.ollama.timeline import Timeline

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.ollama import OllamaProfile

__all__ = ["surface_openai_chat"]

_NS = 1_000_000_000
_DONE = b"data: [DONE]\n\n"
#: Headers Ollama's SSE replies carry (no charset, unlike Starlette's default for text/*).
SSE_HEADERS = (("content-type", "text/event-stream"),)


def _calls(generation: Generation, call_id: str) -> str:
    call = generation.tool_call
    assert call is not None
    function = f'"function":{{"name":{quote(call.name)},"arguments":{quote(call.arguments)}}}'
    return f'[{{"id":"{call_id}","index":0,"type":"function",{function}}}]'


def _deltas(content: str, thinking: str, calls: str | None, role: bool) -> Iterator[str]:
    """``ToStreamChunks``: the delta objects for one native response."""
    role_field = '"role":"assistant",' if role else ""
    if thinking and (content or calls):
        yield "{" + role_field + '"reasoning":' + quote(thinking) + "}"
        yield '{"content":' + quote(content) + (',"tool_calls":' + calls if calls else "") + "}"
        return
    reasoning = ',"reasoning":' + quote(thinking) if thinking else ""
    yield (
        "{" + role_field + '"content":' + quote(content) + reasoning + (',"tool_calls":' + calls if calls else "") + "}"
    )


def _chunk_deltas(generation: Generation) -> tuple[str, ...]:
    """Each pre-``done`` response's chunks, from ``"delta"``'s value to the frame's end (cached)."""
    cached = generation.memo.get("openai.chat")
    if cached is None:
        deltas: list[str] = []
        for chunk in generation.chunks:
            for delta in _deltas(chunk.content, chunk.thinking, None, role=not deltas):
                deltas.append(delta + ',"finish_reason":null}]}\n\n')
        cached = generation.memo["openai.chat"] = tuple(deltas)
    return cached  # type: ignore[return-value]


def _stream(profile: OllamaProfile, generation: Generation, request: ChatRequestView, ctx: RequestContext) -> Reply:
    clock = Timeline.of(profile, ctx, generation.eval_count)
    chat_id = f"chatcmpl-{rand_int(ctx.ids, 999)}"
    first_ns = clock.token_ns(generation.chunks[0].position) if generation.chunks else clock.done_ns
    created = first_ns // _NS
    head = f'data: {{"id":"{chat_id}","object":"chat.completion.chunk","created":{created},"model":'
    model_head = head + quote(request.model) + ',"system_fingerprint":"fp_ollama","choices":['
    open_choice = model_head + '{"index":0,"delta":'
    deltas = _chunk_deltas(generation)
    if generation.error is not None:
        frames = [open_choice + delta for delta in deltas]
        if wrong_key(profile.tool_call_error, generation.error) or frames:
            # The NDJSON error line, re-read as an empty (not done) chat response.
            role = '"role":"assistant",' if not frames else ""
            frames.append(head + '"","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{' + role)
            frames[-1] += '"content":""},"finish_reason":null}]}\n\n'
            return Reply(
                status=200,
                media_type=SSE_MEDIA_TYPE,
                frames=tuple(f.encode() for f in frames),
                headers=SSE_HEADERS,
                log=(stream_cut_note(generation.error, "a finish_reason chunk or data: [DONE]"),),
            )
        return openai_error(500, generation.error)
    # The chunks as bytes, joined to this request's head in one C-level map (memoised deltas).
    chunks: list[bytes] = list(
        map(b"".join, zip(repeat(open_choice.encode()), encoded_chunks(generation.memo, "openai.chat.bytes", deltas)))
    )
    if generation.aborted:  # the runner's repeat abort: no done response, nothing closes the stream
        return Reply(
            status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(chunks), headers=SSE_HEADERS, log=(REPEAT_NOTE,)
        )
    frames: list[str] = []  # the frames after the chunks
    calls = _calls(generation, tool_call_id(ctx.ids)) if generation.tool_call else None
    empty_trailer = chunks and not (generation.final_content or generation.final_thinking or calls)
    if not empty_trailer:
        for delta in _deltas(generation.final_content, generation.final_thinking, calls, role=not chunks):
            frames.append(open_choice + delta + ',"finish_reason":null}]}\n\n')
    reason = "tool_calls" if calls and generation.done_reason == "stop" else generation.done_reason
    frames.append(open_choice + '{},"finish_reason":"' + reason + '"}]}\n\n')
    if request.include_usage:
        prompt, completion = ctx.prompt_tokens, generation.eval_count
        usage = f'"usage":{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{prompt + completion}}}'
        frames.append(model_head + "]," + usage + "}\n\n")
    encoded = (*chunks, *(f.encode() for f in frames), _DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=encoded, headers=SSE_HEADERS)


def _full(profile: OllamaProfile, generation: Generation, request: ChatRequestView, ctx: RequestContext) -> Reply:
    if generation.error is not None:
        message = UNEXPECTED_ERROR_FORMAT if wrong_key(profile.tool_call_error, generation.error) else generation.error
        return openai_error(500, message)
    clock = Timeline.of(profile, ctx, generation.eval_count)
    chat_id = f"chatcmpl-{rand_int(ctx.ids, 999)}"
    message = '{"role":"assistant","content":' + quote(generation.content)
    if generation.thinking:
        message += ',"reasoning":' + quote(generation.thinking)
    reason = '"' + generation.done_reason + '"'
    if generation.tool_call is not None:
        message += ',"tool_calls":' + _calls(generation, tool_call_id(ctx.ids))
        reason = '"tool_calls"' if reason == '"stop"' else reason
    prompt, completion = ctx.prompt_tokens, generation.eval_count
    if generation.aborted:  # the repeat abort: the last response is not the done one
        reason, prompt, completion = "null", 0, 0
    body = (
        f'{{"id":"{chat_id}","object":"chat.completion","created":{clock.done_ns // _NS},"model":{quote(request.model)},'
        f'"system_fingerprint":"fp_ollama","choices":[{{"index":0,"message":{message}}},"finish_reason":{reason}}}],'
        f'"usage":{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{prompt + completion}}}}}\n'
    )
    return Reply(status=200, body=body.encode(), log=(REPEAT_NOTE,) if generation.aborted else ())


def surface_openai_chat(
    profile: OllamaProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as Ollama's ``/v1/chat/completions`` reply (module docstring)."""
    body = request.body
    generation = run(
        completion,
        max_tokens_of(body.get("max_tokens")),
        chat_tool_names(body),
        chat_prefill(body),
        profile.token_repeat,
    )
    if request.stream:
        return _stream(profile, generation, request, ctx)
    return _full(profile, generation, request, ctx)
