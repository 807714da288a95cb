"""``POST /v1/chat/completions`` as SGLang serves gpt-oss (sgl-project/sglang@v0.5.23).

Checked by running it (``tools/sglang_serving_diff.py``: 1,241 chat exchanges, 0 differences but
``reasoning_tokens``, an engine count) and read from ``python/sglang/srt/entrypoints/openai/serving_chat.py`` (``_build_chat_response``,
``_generate_chat_stream``, ``_generate_stream_content``, ``_process_tool_call_stream``,
``_process_tool_calls``), ``sse_utils.py`` (``build_sse_content``), ``protocol.py`` (the models and
their serializers) and ``managers/detokenizer_manager.py`` (``trim_matched_stop``):

* The text the parsers see is the detokenized output with special tokens kept (gpt-oss forces
  ``skip_special_tokens=False``), the matched stop token cut off, except ``<|call|>`` when the tool
  parser is ``gpt-oss`` (that is how a call's block gets its end marker).
* ``id`` is the request id, 32 hex digits with no prefix (``uuid.uuid4().hex``, io_struct);
  tool-call ids are ``call_`` + 24 hex digits.
* Non-streamed: ``content`` is never null (``""``), ``reasoning_content`` null when empty,
  ``tool_calls`` only when there are calls, ``matched_stop`` the stop token id (``null`` after a
  tool call or a ``length`` stop), ``metadata: {"weight_version": "default"}``.
* Streamed: a first chunk with ``role`` and ``content: ""``, then reasoning and content deltas (the
  msgspec chunks keep ``reasoning_content: null`` in every delta; chunks of the tool path are
  pydantic dumps with every field), each call whole in one delta, a finish chunk with
  ``matched_stop``, a usage chunk (``choices: []``) with ``stream_options.include_usage``, then
  ``data: [DONE]``. What the parsers still hold when the stream ends is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.sglang.detectors import ReasoningStream, ToolCallStream, parse_tool_calls, split_reasoning
from mockoss.profiles.sglang.detokenizer import FIRST_SPECIAL, stream_deltas
from mockoss.profiles.sglang.template import Refusal, template_count
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.sglang import SglangProfile

__all__ = ["StreamPlan", "chat_prompt_tokens", "stream_plan", "surface_chat", "template_refusal"]

RETURN, CALL, ENDOFTEXT, END = 200002, 200012, 199999, 200007
_STOPS = (RETURN, CALL, ENDOFTEXT)
_DONE = b"data: [DONE]\n\n"


def chat_prompt_tokens(body: Any, counted: int | Callable[[], int], raw: bytes = b"") -> int:
    """The chat prompt's length in tokens as SGLang 0.5.23 counts it (``usage.prompt_tokens``):
    the model's own chat template rendered and encoded (:func:`.template.template_count`; SGLang
    renders it through transformers' ``apply_chat_template``,
    ``python/sglang/srt/entrypoints/openai/serving_chat.py:2198``), not the Harmony prompt
    ``counted`` (mockoss's count with the request's tools, as vLLM renders it). So, as the
    goldens ``tests/golden/sglang-0.5.23`` show: ``tool_choice: "none"`` renders no tools, an
    array parameter without ``items`` is ``any[]``, a tool call's arguments are re-serialised
    with spaces, a tool result is JSON-quoted and an assistant's ``reasoning_content`` is dropped.

    ``body``: the request body (anything else: ``counted``); ``raw``: its bytes, under which the
    count is kept (:func:`mockoss.endpoints.body_count`: a resent body costs a lookup).
    ``counted`` is also the answer for a body the template cannot render (its refusal,
    :func:`template_refusal`, is then off: ``tool_description_required: false``) and for one
    whose text cannot be encoded (a lone surrogate: ``counted`` is the repaired Harmony count).
    ``counted`` may be a function giving it (the server core's, :func:`mockoss.server.profile_hooks.prompt_count`):
    then the Harmony prompt is counted only for such a body.
    """
    if isinstance(body, dict):
        try:
            return template_count(body, raw)
        except Exception:  # noqa: BLE001, S110  (a Refusal, a render SGLang answers with a 500, a lone surrogate)
            pass
    return counted() if callable(counted) else counted


def template_refusal(body: Any, raw: bytes = b"") -> Reply | None:
    """SGLang's 400 for a chat request whose prompt the gpt-oss chat template cannot render,
    else ``None``; the same render as the count's (:func:`.template.template_count`, kept for the
    request's :func:`chat_prompt_tokens`), so the refusal is the template's own error.

    SGLang renders the template (openai/gpt-oss-20b ``chat_template.jinja``) and, when that
    raises, renders again with the tools flattened to their ``function`` objects; the retry's
    ``TemplateError`` or ``TypeError`` is a 400 ``BadRequest`` with its text
    (sgl-project/sglang v0.5.23 ``python/sglang/srt/entrypoints/openai/serving_chat.py:2206-2227``,
    ``serving_base.py:123``). A tool without a description (the template's ``"// " +
    tool.description``) so gets ``'dict object' has no attribute 'function'`` (checked:
    ``tests/golden/sglang-0.5.23``, ``chat-nostream-prompt-tool-without-description*``); a
    ``tool`` message with no assistant tool call before it, or assistant content holding Harmony
    channel markup, the template's ``raise_exception`` message (the retry's error instead when the
    request has tools); an assistant tool call whose ``arguments`` are not a JSON object,
    SGLang's own check (``normalize_assistant_tool_call_arguments``). ``raw``: the body's bytes,
    when the caller has them (a body rendered before is then a lookup).
    """
    if not isinstance(body, dict):
        return None
    try:
        template_count(body, raw)
    except Refusal as refusal:
        error = {"object": "error", "message": refusal.message, "type": "BadRequest", "param": None, "code": 400}
        return Reply(status=400, body=dumps(error).encode())
    except Exception:  # noqa: BLE001  (not a 400 of SGLang's: the count falls back, chat_prompt_tokens)
        return None
    return None


def _finish(profile: SglangProfile, tokens: tuple[int, ...], finish: str) -> tuple[tuple[int, ...], str, int | None]:
    """``(tokens the text is made of, finish type, matched stop token)`` after ``trim_matched_stop``."""
    if finish != "stop" or not tokens or tokens[-1] not in _STOPS:
        return tokens, finish, None
    matched = tokens[-1]
    keep = matched == CALL and profile.tool_call_parser == "gpt-oss"
    return (tokens if keep else tokens[:-1]), "stop", matched


def _reasoning_tokens(profile: SglangProfile, tokens: tuple[int, ...]) -> int:
    """Tokens up to and with the first ``<|end|>`` (``Req.update_reasoning_tokens``), when a
    reasoning parser is set and ``count_reasoning_tokens`` (the scheduler counts them with
    gpt-oss's chat template: ``tests/golden/sglang-0.5.23``, SGLang's own code)."""
    if profile.reasoning_parser is None or not profile.count_reasoning_tokens:
        return 0
    return tokens.index(END) + 1 if END in tokens else len(tokens)


def _usage(prompt: int, completion: int, reasoning: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "reasoning_tokens": reasoning,
        "completion_tokens_details": {"reasoning_tokens": reasoning} if reasoning else None,
    }


def _tools(profile: SglangProfile, request: ChatRequestView) -> frozenset[str] | None:
    """Declared function names when the tool parser runs for this request, else ``None``."""
    if profile.tool_call_parser is None or not request.tools or request.tool_choice == "none":
        return None
    return frozenset(t.name for t in request.tools if t.type == "function" and t.name)


def surface_chat(
    profile: SglangProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext
) -> Reply:
    """SGLang's chat reply for ``completion``; see the module docstring for the rules."""
    emission = completion.emit(request.max_tokens)
    reasoning_tokens = _reasoning_tokens(profile, emission.tokens)
    usage = _usage(ctx.prompt_tokens, len(emission.tokens), reasoning_tokens)
    rid = ctx.ids.next()
    tools = _tools(profile, request)
    if request.stream:
        plan = stream_plan(profile, completion, request.max_tokens, tools)
        return _stream(profile, plan, (usage, reasoning_tokens), rid, request, ctx)
    text, reasoning, calls, finish, matched = _parsed(profile, completion, request.max_tokens, tools)
    message: dict[str, Any] = {"role": "assistant", "content": text or "", "reasoning_content": reasoning or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": ctx.ids.next("call_")[:29],
                "index": i,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(calls)
        ]
    body = {
        "id": rid,
        "object": "chat.completion",
        "created": ctx.created,
        "model": request.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish, "matched_stop": matched}
        ],
        "usage": usage,
        "metadata": {"weight_version": "default"},
    }
    return Reply(status=200, body=dumps(body).encode())


@dataclass(frozen=True, slots=True)
class StreamPlan:
    """What a streamed chat reply holds that depends only on the completion, the token limit, the
    parser switches and the declared tool names (:func:`stream_plan`), memoised on the completion.

    ``events`` are the chunks between the role chunk and the finish chunk, in order, as
    ``(step, kind, delta JSON)``: ``kind`` ``"light"`` (a msgspec chunk, ``build_sse_content``),
    ``"full"`` (a pydantic chunk with every field) or ``"call"`` (a full chunk whose tool call's
    ``id`` is drawn per request: the delta JSON is then ``(before id, after id)``); ``step`` is
    the 1-based decode step (for ``continuous_usage_stats``). ``pieces`` are the same chunks
    after the per-request head, ready for a request without ``continuous_usage_stats``
    (``bytes``, or ``(before id, after id)`` for a call). ``called``: a call was streamed.
    """

    events: tuple[tuple[int, str, bytes | tuple[bytes, bytes]], ...]
    pieces: tuple[bytes | tuple[bytes, bytes], ...]
    plain: bool
    finish: str
    matched: int | None
    calls: int


_MEMO = "sglang.chat.stream"
_NULL_TAIL = ',"logprobs":null,"finish_reason":null,"matched_stop":null}]'
_USAGE_TAIL = (_NULL_TAIL + ',"usage":').encode()  # before a continuous_usage_stats chunk's counts
_FULL_BASE = {"role": None, "content": None, "reasoning_content": None}
#: A slot in a memoised chunk: ``dumps`` writes the NUL character as ``\u0000``, so the quoted
#: slot below is never a scripted text (which would be written ``"...\u0000..."`` only with other
#: characters around, or escaped twice inside tool arguments).
_ID_SLOT = '"\\u0000"'


def stream_plan(
    profile: SglangProfile, completion: Completion, max_tokens: int | None, tools: frozenset[str] | None
) -> StreamPlan:
    """The request-independent half of a streamed chat reply (:class:`StreamPlan`): the
    detokenizer's steps through the reasoning and tool-call detectors, computed once per
    (completion, ``Completion.cap(max_tokens)``, the switches that change them, tool names)."""
    reasoning_on = profile.reasoning_parser is not None and profile.separate_reasoning
    key = (
        _MEMO,
        completion.cap(max_tokens),
        profile.skip_special_tokens,
        profile.tool_call_parser,
        reasoning_on,
        tools,
        profile.forward_unknown_tools,
        profile.stream_plain_text_passthrough,
        profile.hyphenated_tool_names,
    )
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    tokens, finish, matched = _finish(profile, emission.tokens, emission.finish_reason)
    # The trimmed stop token's step still runs the parsers, with the text the finish adds.
    steps = stream_deltas(
        emission.tokens, skip_special=profile.skip_special_tokens, trim_last=len(tokens) < len(emission.tokens)
    )
    reasoning_stream = ReasoningStream() if reasoning_on else None
    call_stream = (
        ToolCallStream(
            tools, profile.forward_unknown_tools, profile.stream_plain_text_passthrough, profile.hyphenated_tool_names
        )
        if tools is not None
        else None
    )
    events: list[tuple[int, str, bytes | tuple[bytes, bytes]]] = []
    for done, delta in enumerate(steps, 1):
        if reasoning_stream is not None:
            thought, delta = reasoning_stream.feed(delta)
            if thought:
                events.append((done, "light", dumps({"reasoning_content": thought}).encode()))
        if call_stream is not None:
            text, calls = call_stream.feed(delta)
            if text:
                events.append((done, "full", dumps({**_FULL_BASE, "content": text}).encode()))
            for call in calls:
                entry = {
                    "id": "\x00",
                    "index": call.index,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                before, _, after = dumps({**_FULL_BASE, "tool_calls": [entry]}).partition(_ID_SLOT)
                events.append((done, "call", (before.encode() + b'"', b'"' + after.encode())))
        elif delta:
            events.append((done, "light", dumps({"reasoning_content": None, "content": delta}).encode()))
    calls_made = sum(1 for _, kind, _ in events if kind == "call")
    final = "tool_calls" if calls_made and finish == "stop" else finish
    light_tail = (_NULL_TAIL + "}\n\n").encode()
    full_tail = (_NULL_TAIL + ',"usage":null}\n\n').encode()
    pieces: list[bytes | tuple[bytes, bytes]] = []
    for _, kind, delta in events:
        if kind == "call":
            pieces.append((delta[0], delta[1] + full_tail))  # type: ignore[index]
        else:
            pieces.append(delta + (light_tail if kind == "light" else full_tail))  # type: ignore[operator]
    plan = StreamPlan(tuple(events), tuple(pieces), not calls_made, final, matched, calls_made)
    completion._memo[key] = plan
    return plan


def _usage_json(prompt: int, completion: int, reasoning: int) -> str:
    """``dumps(_usage(prompt, completion, reasoning))`` without building the dict."""
    details = f'{{"reasoning_tokens":{reasoning}}}' if reasoning else "null"
    return (
        f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion},'
        f'"prompt_tokens_details":null,"reasoning_tokens":{reasoning},"completion_tokens_details":{details}}}'
    )


def _parsed(
    profile: SglangProfile, completion: Completion, max_tokens: int | None, tools: frozenset[str] | None
) -> tuple[str, str | None, tuple[Any, ...], str, int | None]:
    """``(content, reasoning_content, calls, finish_reason, matched_stop)`` of a non-streamed
    reply: the whole text through the reasoning and tool-call detectors, memoised on the
    completion per (``Completion.cap(max_tokens)``, the switches that change it, tool names)."""
    reasoning_on = profile.reasoning_parser is not None and profile.separate_reasoning
    key = (
        _MEMO_FULL,
        completion.cap(max_tokens),
        profile.skip_special_tokens,
        profile.tool_call_parser,
        reasoning_on,
        tools,
        profile.forward_unknown_tools,
        profile.hyphenated_tool_names,
    )
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    tokens, finish, matched = _finish(profile, emission.tokens, emission.finish_reason)
    kept = [t for t in tokens if not (profile.skip_special_tokens and t >= FIRST_SPECIAL)]
    text = load_encoding().decode(kept) if kept else ""
    reasoning: str | None = None
    if reasoning_on:
        reasoning, text = split_reasoning(text)
    calls: list = []
    if tools is not None:
        text, calls = parse_tool_calls(
            text, tools, forward_unknown=profile.forward_unknown_tools, hyphenated=profile.hyphenated_tool_names
        )
        if calls and finish == "stop":
            finish, matched = "tool_calls", None
    parsed = (text, reasoning, tuple(calls), finish, matched)
    completion._memo[key] = parsed
    return parsed


_MEMO_FULL = "sglang.chat.full"


def _stream(
    profile: SglangProfile,
    plan: StreamPlan,
    usage_total: tuple[dict[str, Any], int],
    rid: str,
    request: ChatRequestView,
    ctx: RequestContext,
) -> Reply:
    """The SSE frames: the memoised :class:`StreamPlan` under this request's head (id,
    ``created``, model) and call ids. ``stream_options.include_usage`` or
    ``stream_default_include_usage`` adds the usage chunk (``should_include_usage``);
    ``continuous_usage_stats`` puts the counts so far on every reasoning, content and tool-call
    chunk."""
    usage, reasoning_total = usage_total
    head = f'data: {{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{dumps(request.model)},"choices":[{{"index":0,"delta":'.encode()
    frames = [head + b'{"reasoning_content":null,"role":"assistant","content":""}' + (_NULL_TAIL + "}\n\n").encode()]
    if request.continuous_usage_stats:
        prompt = ctx.prompt_tokens
        for done, kind, delta in plan.events:
            step_usage = _usage_json(prompt, done, min(done, reasoning_total)).encode()
            if kind == "call":
                delta = delta[0] + ctx.ids.next("call_")[:29].encode() + delta[1]  # type: ignore[index]
            frames.append(head + delta + _USAGE_TAIL + step_usage + b"}\n\n")  # type: ignore[operator]
    elif plan.plain:
        frames += map(b"".join, zip(repeat(head), plan.pieces))  # type: ignore[arg-type]
    else:
        next_id = ctx.ids.next
        frames += [
            head + piece
            if piece.__class__ is bytes
            else b"".join((head, piece[0], next_id("call_")[:29].encode(), piece[1]))  # type: ignore[index, operator]
            for piece in plan.pieces
        ]
    tail = f',"logprobs":null,"finish_reason":{dumps(plan.finish)},"matched_stop":{dumps(plan.matched)}}}]}}'
    frames.append(head + b'{"reasoning_content":null}' + tail.encode() + b"\n\n")
    if request.include_usage or profile.stream_default_include_usage:
        frames.append(
            f'data: {{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{dumps(request.model)},"choices":[],"usage":{dumps(usage)}}}\n\n'.encode()
        )
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
