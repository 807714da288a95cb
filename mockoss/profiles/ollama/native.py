"""``POST /api/chat`` and ``POST /api/generate`` as Ollama serves gpt-oss.

Reproduces ``ollama/ollama:server/routes.go@fb307609`` (``ChatHandler``, ``GenerateHandler``,
``writeChatResponse``, ``streamResponse``) with the shapes of ``api/types.go`` (``ChatResponse``,
``GenerateResponse``, ``Message``, ``ToolCall``, ``Metrics``).

Streaming is the default (``"stream": false`` turns it off): ``application/x-ndjson``, one Go-JSON
object per line, one per chat-handler response (:mod:`~mockoss.profiles.ollama.generation`), the
last with ``done: true``, ``done_reason`` and the metrics. Non-streamed: one object (no trailing
newline, ``application/json; charset=utf-8``) with the concatenated content and thinking.

A tool call whose arguments do not decode fails the request (ollama#12884, #11800,
continuedev/continue#10221): non-streamed HTTP 500 ``{"error":"error parsing tool call: raw='…',
err=…"}``; streamed, the lines sent so far then ``{"error":"…"}`` (HTTP 200), or HTTP 500 JSON when
nothing was sent yet. Ollama 0.11.3 (``tool_call_error="v0.11.3"``, ollama#11781, #11704, fixed by
PR #11861) streamed ``{"error parsing tool call":"<Go error>"}`` at HTTP 200 instead, and its
non-streamed reply was HTTP 500 ``{"error":"unexpected error format in response"}``.

A generation the runner's token-repeat abort cuts (:mod:`~mockoss.profiles.ollama.repeat`,
``llm/llama_server.go:1692-1702``) has no ``Done`` response: streamed, the lines so far and no
``done`` line; non-streamed, the last response with the concatenated texts, ``"done":false`` and
no ``done_reason``, metrics or ``context`` (``server/routes.go`` ``writeChatResponse``, and
``GenerateHandler``'s aggregation, copy the last response they got).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.lru import BytesLRU, approx_bytes
from mockoss.profiles.base import Reply, RequestContext
from mockoss.profiles.ollama.errors import GO_JSON, native_error
from mockoss.profiles.ollama.generation import Generation, engine_completion, limit, pieces, run
from mockoss.profiles.ollama.gojson import quote
from mockoss.profiles.ollama.ids import tool_call_id
from mockoss.profiles.ollama.prompt import render_native_generate_prompt
from mockoss.profiles.ollama.repeat import REPEAT_ERROR, REPEAT_NOTE, limit_of, repeat_abort, wrong_key
from mockoss.profiles.ollama.timeline import Timeline, rfc3339

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.ollama import OllamaProfile
    from mockoss.schemas.ollama import OllamaChatRequestView, OllamaGenerateRequestView

__all__ = [
    "CONTEXT_CACHE_BYTES", "NDJSON_MEDIA_TYPE", "PRERENDERED_PROMPT", "clear_context_cache", "encoded_chunks", "needs_prompt_ids", "prompt_ids_slot",
    "surface_native_chat", "surface_native_generate",
]  # fmt: skip

NDJSON_MEDIA_TYPE = "application/x-ndjson"
#: What 0.11.3 answered a non-streamed request whose stream ended in its wrongly keyed error.
UNEXPECTED_ERROR_FORMAT = "unexpected error format in response"
#: A Go ``time.ParseDuration`` string worth zero: ``0``, ``0s``, ``-0m``, ``0.0h0s``…
_ZERO_DURATION = re.compile(r"[+-]?(?:0|(?:0+(?:\.0*)?(?:ns|us|µs|μs|ms|s|m|h))+)\Z")


@functools.lru_cache(maxsize=256)
def _quoted(text: str) -> str:
    return quote(text)


def _head(model: str, stamp: str) -> str:
    return '{"model":' + _quoted(model) + ',"created_at":"' + stamp + '",'


def _failure(profile: OllamaProfile, generation: Generation, frames: list[bytes], streamed: bool) -> Reply:
    """The reply when the tool call did not decode (``frames``: the chunks sent so far)."""
    assert generation.error is not None and generation.error_cause is not None
    if wrong_key(profile.tool_call_error, generation.error):
        if not streamed:
            return native_error(500, UNEXPECTED_ERROR_FORMAT)
        frames.append(('{"error parsing tool call":' + quote(generation.error_cause) + "}\n").encode())
    elif not streamed or not frames:
        return native_error(500, generation.error)
    else:
        frames.append(('{"error":' + quote(generation.error) + "}\n").encode())
    return Reply(status=200, media_type=NDJSON_MEDIA_TYPE, frames=tuple(frames))


#: The body of a non-streamed reply that got no response at all: Go's zero ``api.ChatResponse``.
_ZERO_CHAT = '{"model":"","created_at":"0001-01-01T00:00:00Z","message":{"role":"","content":""},"done":false}'
_ZERO_GENERATE = '{"model":"","created_at":"0001-01-01T00:00:00Z","response":"","done":false}'


def _incomplete(model: str, stamp: str | None, fields: str, zero: str) -> Reply:
    """The non-streamed reply to a generation cut by the repeat abort: the last response (stamped
    ``stamp``, ``None`` when there was none: Go's zero value) with ``fields``, ``"done":false``."""
    body = zero if stamp is None else _head(model, stamp) + fields + ',"done":false}'
    return Reply(status=200, body=body.encode(), headers=GO_JSON, log=(REPEAT_NOTE,))


def _tool_call(generation: Generation, ctx: RequestContext | None) -> str:
    """``"tool_calls":[…]`` (with an ``id`` when ``ctx`` is given: chat assigns one, generate not)."""
    call = generation.tool_call
    if call is None:
        return ""
    function = f'"function":{{"index":0,"name":{quote(call.name)},"arguments":{call.arguments}}}'
    if ctx is None:
        return ',"tool_calls":[{' + function + "}]"
    return ',"tool_calls":[{"id":"' + tool_call_id(ctx.ids) + '",' + function + "}]"


def _message(content: str, thinking: str, tool_calls: str = "") -> str:
    thought = ',"thinking":' + quote(thinking) if thinking else ""
    return '"message":{"role":"assistant","content":' + quote(content) + thought + tool_calls + "}"


def _unloads(keep_alive: object) -> bool:
    """``keep_alive`` is a zero duration (``0``, ``"0"``, ``"0s"``, ``"0m"``…)."""
    if isinstance(keep_alive, bool):
        return False
    if isinstance(keep_alive, (int, float)):
        return keep_alive == 0
    return isinstance(keep_alive, str) and _ZERO_DURATION.match(keep_alive) is not None


def _load_reply(model: str, ctx: RequestContext, field: str, keep_alive: object) -> Reply:
    """What Ollama answers a request with no messages / an empty prompt: it loads the model
    (``done_reason: "load"``), or unloads it when ``keep_alive`` is zero (``"unload"``)."""
    reason = "unload" if _unloads(keep_alive) else "load"
    body = _head(model, rfc3339(ctx.created * 1_000_000_000)) + field + f',"done":true,"done_reason":"{reason}"}}'
    return Reply(status=200, body=body.encode(), headers=GO_JSON)


def _chunk_messages(generation: Generation) -> tuple[str, ...]:
    cached = generation.memo.get("native.chat")
    if cached is None:
        cached = generation.memo["native.chat"] = tuple(
            _message(c.content, c.thinking) + ',"done":false}\n' for c in generation.chunks
        )
    return cached  # type: ignore[return-value]


def surface_native_chat(
    profile: OllamaProfile, completion: Completion, request: OllamaChatRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as Ollama's ``/api/chat`` reply (see the module docstring).

    A chunk is ``{"model","created_at","message":{"role":"assistant","content"[,"thinking"]
    [,"tool_calls":[{"id":"call_…","function":{"index":0,"name","arguments":{…}}}]]},"done":false}``;
    the last adds ``"done":true,"done_reason","total_duration","load_duration","prompt_eval_count",
    "prompt_eval_duration","eval_count","eval_duration"`` (ns). The tool call (at most one) rides on
    the last object, its name mapped back to the declared tool (``get-weather`` declared, the model
    says ``get_weather``).
    """
    if request.load_only:
        message = '"message":{"role":"assistant","content":""}'
        return _load_reply(request.model, ctx, message, request.body.get("keep_alive"))
    generation = run(completion, request.max_tokens, request.tool_names, request.prefill, profile.token_repeat)
    clock = Timeline.of(profile, ctx, generation.eval_count)
    if not request.stream:
        if generation.error is not None:
            return _failure(profile, generation, [], streamed=False)
        if generation.aborted:
            stamp = clock.stamp(generation.chunks[-1].position) if generation.chunks else None
            return _incomplete(request.model, stamp, _message(generation.content, generation.thinking), _ZERO_CHAT)
        message = _message(generation.content, generation.thinking, _tool_call(generation, ctx))
        body = (
            _head(request.model, rfc3339(clock.done_ns))
            + message
            + f',"done":true,"done_reason":"{generation.done_reason}",{clock.metrics_json()}}}'
        )
        return Reply(status=200, body=body.encode(), headers=GO_JSON)
    positions = _positions(generation)
    stamps = clock.stamps(positions, generation.memo, "native.stamps")
    frames = _stamped(
        request.model, stamps, encoded_chunks(generation.memo, "native.chat.bytes", _chunk_messages(generation))
    )
    if generation.error is not None:
        return _failure(profile, generation, frames, streamed=True)
    if generation.aborted:
        return Reply(status=200, media_type=NDJSON_MEDIA_TYPE, frames=tuple(frames), log=(REPEAT_NOTE,))
    last = _message(generation.final_content, generation.final_thinking, _tool_call(generation, ctx))
    frames.append(
        (
            _head(request.model, rfc3339(clock.done_ns))
            + last
            + f',"done":true,"done_reason":"{generation.done_reason}",{clock.metrics_json()}}}\n'
        ).encode()
    )
    return Reply(status=200, media_type=NDJSON_MEDIA_TYPE, frames=tuple(frames))


def _positions(generation: Generation) -> tuple[int, ...]:
    cached = generation.memo.get("native.positions")
    if cached is None:
        cached = generation.memo["native.positions"] = tuple(chunk.position for chunk in generation.chunks)
    return cached  # type: ignore[return-value]


def encoded_chunks(memo: MutableMapping[object, object], key: object, chunks: tuple[str, ...]) -> tuple[bytes, ...]:
    """``chunks`` as UTF-8, kept in ``memo`` under ``key`` (a generation's or a completion's memo;
    the native and the OpenAI-compatible streams both join per-request heads to them)."""
    cached = memo.get(key)
    if cached is None:
        cached = memo[key] = tuple(chunk.encode() for chunk in chunks)
    return cached  # type: ignore[return-value]


def _stamped(model: str, stamps: tuple[bytes, ...], chunks: tuple[bytes, ...]) -> list[bytes]:
    """Each chunk after its head: ``{"model":…,"created_at":"<stamp>",`` (one C-level map)."""
    prefix = ('{"model":' + _quoted(model) + ',"created_at":"').encode()
    return list(map(b"".join, zip(repeat(prefix), stamps, repeat(b'",'), chunks)))  # as many stamps as chunks


# --------------------------------------------------------------------------- /api/generate


#: Byte budget of the prompts' token ids kept for ``context`` (a key holds the whole prompt).
CONTEXT_CACHE_BYTES = 16 * 1024 * 1024
#: ``"id,id,…"`` of a generate prompt's tokens, by ``(prompt, system, think, context)``: what they depend
#: on (:func:`~mockoss.profiles.ollama.prompt.render_native_generate_prompt`, not ``raw``).
_prompt_ids: BytesLRU[str] = BytesLRU(CONTEXT_CACHE_BYTES)

#: The prompt token ids of the ``/api/generate`` body being answered, rendered before the server
#: lock: ``(body, "id,id,…")``, used for the request whose parsed body is that very object. The server
#: sets it for a big body (:mod:`mockoss.server.prelock`, rendered in its worker process:
#: openai-harmony's BPE is quadratic in a word's length, so one 50,000-character word took
#: ~0.8-1.4 s under the lock here); ``None``: rendered here when needed. In place of the ids, the
#: tokenizer panic the worker reported (raised here, as rendering here would raise it).
PRERENDERED_PROMPT: ContextVar[tuple[Mapping[str, Any], str | BaseException] | None] = ContextVar(
    "mockoss_ollama_prompt_ids", default=None
)


def _prompt_key(body: Mapping[str, Any]) -> tuple[Any, ...]:
    context = body.get("context")  # validated: a list of ints or None (the prompt's first tokens)
    return (body.get("prompt"), body.get("system"), body.get("think"), tuple(context) if context else None)


def needs_prompt_ids(request: OllamaGenerateRequestView) -> bool:
    """Whether :func:`surface_native_generate` renders ``request``'s prompt for ``context`` (not
    ``raw``, not a load-only request, and not cached): what :mod:`mockoss.server.prelock` asks
    before it renders them elsewhere into :data:`PRERENDERED_PROMPT`."""
    return not request.raw and not request.load_only and _prompt_ids.get(_prompt_key(request.body)) is None


def prompt_ids_slot(request: OllamaGenerateRequestView) -> ContextVar[Any] | None:
    """:data:`PRERENDERED_PROMPT` when :func:`needs_prompt_ids`, else ``None``: the
    ``prompt_ids_path`` of ``/api/generate`` in :data:`mockoss.endpoints.ENDPOINTS`."""
    return PRERENDERED_PROMPT if needs_prompt_ids(request) else None


def clear_context_cache() -> None:
    """Forget the prompts' token ids kept for ``context`` (``MockServer.reset`` calls this)."""
    _prompt_ids.clear()


def _prompt_part(body: Mapping[str, Any]) -> str:
    """``"id,id,…"``: the prompt's token ids, from the cache, :data:`PRERENDERED_PROMPT`, or rendered now.

    Raises what rendering raises (a tokenizer panic: the one the worker process reported, if it
    rendered them, without rendering again: ~90 ms holding the GIL for a 1,000,000-character word)."""
    key = _prompt_key(body)
    found = _prompt_ids.get(key)
    if found is not None:
        return found
    given = PRERENDERED_PROMPT.get()
    if given is not None and given[0] is body:
        if isinstance(given[1], BaseException):
            raise given[1]
        joined = given[1]
    else:
        joined = ",".join(map(str, render_native_generate_prompt(body)))
    return _prompt_ids.offer(key, joined, lambda: approx_bytes(key) + sys.getsizeof(joined))


def _context(body: Mapping[str, Any], completion: Completion, parts: _GenerateParts, max_tokens: int | None) -> str:
    """``context``, the token ids of the prompt then of the generated text, for the next turn.

    Ollama tokenises the prompt and the generated text as one string, special tokens parsed
    (``ollama/ollama@fb307609:server/routes.go``, ``GenerateHandler``: on the last response,
    unless ``raw``, ``r.Tokenize(c.Request.Context(), prompt+sb.String())`` is ``res.Context``);
    mockoss joins the prompt's rendered ids (:func:`render_native_generate_prompt`, cached in
    bytes by :data:`CONTEXT_CACHE_BYTES`) and the text's (memoised on the completion).
    """
    prompt = _prompt_part(body)
    key = ("ollama.generate.context", limit(completion, max_tokens))  # the parts' limit
    text = completion._memo.get(key)
    if text is None:
        text = completion._memo[key] = ",".join(map(str, load_encoding().encode(parts.text, allowed_special="all")))
    return "[" + prompt + ("," + text if prompt and text else text) + "]"


def _response(text: str, thinking: str) -> str:
    return '"response":' + quote(text) + (',"thinking":' + quote(thinking) if thinking else "")


@dataclass(frozen=True, slots=True)
class _GenerateParts:
    """The request-independent pieces of a ``/api/generate`` reply for one completion."""

    generation: Generation | None  # None for raw
    positions: tuple[int, ...]
    chunks: tuple[str, ...]  # '"response":…,"done":false}\n' per chunk
    final: str  # the final object's "response"/"thinking" fields
    full: str  # the non-streamed object's "response"/"thinking" fields
    tool_calls: str
    eval_count: int
    done_reason: str
    text: str  # the generated text as streamed (for ``context``)
    aborted: bool  # cut by the runner's repeat abort: no Done response


def _generate_parts(completion: Completion, max_tokens: int | None, raw: bool, token_repeat: str) -> _GenerateParts:
    # every limit that does not cut the answer shares one entry (Completion.cap)
    max_tokens = limit(completion, max_tokens)
    key = ("ollama.generate", max_tokens, raw, token_repeat)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    if raw:
        emission = engine_completion(completion).emit(max_tokens)
        texts = pieces(emission.tokens, preserved=frozenset())
        abort = repeat_abort(emission.tokens, texts, frozenset(), limit_of(token_repeat))
        if abort is not None:  # no preserved tokens: every control token is an empty event
            texts = [(index, text) for index, text in texts if index < abort]
        rows = [(index, text, "") for index, text in texts]
        generation, final, eval_count, reason = None, ("", ""), len(emission.tokens), emission.finish_reason
        if abort is not None:
            eval_count = texts[-1][0] + 1 if texts else 0
        aborted = abort is not None
    else:
        generation = run(completion, max_tokens, (), None, token_repeat)
        rows = [(c.position, c.content, c.thinking) for c in generation.chunks]
        final = (generation.final_content, generation.final_thinking)
        eval_count, reason = generation.eval_count, generation.done_reason
        texts = list(generation.pieces)
        aborted = generation.aborted
    parts = _GenerateParts(
        generation=generation,
        positions=tuple(p for p, _, _ in rows),
        chunks=tuple(_response(t, th) + ',"done":false}\n' for _, t, th in rows),
        final=_response(*final),
        full=_response("".join(t for _, t, _ in rows) + final[0], "".join(th for _, _, th in rows) + final[1]),
        tool_calls=_tool_call(generation, None) if generation is not None else "",
        eval_count=eval_count,
        done_reason=reason,
        text="".join(text for _, text in texts),
        aborted=aborted,
    )
    completion._memo[key] = parts
    return parts


def surface_native_generate(
    profile: OllamaProfile, completion: Completion, request: OllamaGenerateRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as Ollama's ``/api/generate`` reply.

    Chunks ``{"model","created_at","response"[,"thinking"],"done":false}``; the last one adds
    ``"done":true,"done_reason","context":[…],`` the metrics, then ``"tool_calls":[{"function":
    {"index":0,"name","arguments"}}]`` (no ``id``, and no name mapping: generate declares no tools).
    ``context`` is the prompt's tokens followed by the generated text's (omitted with ``raw``).
    ``raw: true`` skips the harmony parser: the text comes back as generated, special tokens
    dropped (llama-server preserves none for it), all of it in ``response``.
    """
    if request.load_only:
        return _load_reply(request.model, ctx, '"response":""', request.body.get("keep_alive"))
    parts = _generate_parts(completion, request.max_tokens, request.raw, profile.token_repeat)
    clock = Timeline.of(profile, ctx, parts.eval_count)
    frames: list[bytes] = []
    if request.stream:  # the chunks (a non-streamed reply has none: not built)
        key = (
            "ollama.generate",
            limit(completion, request.max_tokens),
            request.raw,
            profile.token_repeat,
        )  # the parts' key
        stamps = clock.stamps(parts.positions, completion._memo, (*key, "stamps"))
        frames = _stamped(request.model, stamps, encoded_chunks(completion._memo, (*key, "bytes"), parts.chunks))
    if parts.generation is not None and parts.generation.error is not None:
        return _failure(profile, parts.generation, frames, streamed=request.stream)
    if parts.aborted and request.raw and profile.token_repeat == "100-error":  # no parser, no Generation
        error = Generation((), "", "", None, REPEAT_ERROR, REPEAT_ERROR, "stop", 0, "", "", (), ())
        return _failure(profile, error, frames, streamed=request.stream)
    if parts.aborted:
        if not request.stream:
            stamp = clock.stamp(parts.positions[-1]) if parts.positions else None
            return _incomplete(request.model, stamp, parts.full, _ZERO_GENERATE)
        return Reply(status=200, media_type=NDJSON_MEDIA_TYPE, frames=tuple(frames), log=(REPEAT_NOTE,))
    context = ""
    if not request.raw:
        context = ',"context":' + _context(request.body, completion, parts, request.max_tokens)
    tail = f',"done":true,"done_reason":"{parts.done_reason}"{context},{clock.metrics_json()}{parts.tool_calls}}}'
    if not request.stream:
        body = _head(request.model, rfc3339(clock.done_ns)) + parts.full + tail
        return Reply(status=200, body=body.encode(), headers=GO_JSON)
    frames.append((_head(request.model, rfc3339(clock.done_ns)) + parts.final + tail + "\n").encode())
    return Reply(status=200, media_type=NDJSON_MEDIA_TYPE, frames=tuple(frames))
