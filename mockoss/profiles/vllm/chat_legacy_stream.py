"""Chat-completion streams as 2025 vLLM wrote them for gpt-oss (one engine step per token).

Per token, after ``harmony_parser.process(token)``, the delta comes from the parser's channel,
recipient and ``last_content_delta`` under one of three rules:

* ``"inline"`` (``serving_chat.py@003fe593``, v0.10.2–v0.11): ``final`` → ``content`` (even
  ``""``); ``analysis`` → reasoning (even ``""``; nothing if ``include_reasoning`` is false);
  ``commentary`` + ``functions.*`` → a tool call (``{"id","type","index","function":{"name",
  "arguments":""}}`` when the recipient changes, then ``{"index","function":{"arguments"}}``
  per non-empty delta; the index counts completed ``commentary`` function messages); anything
  else (header tokens, commentary preambles, other recipients) → no chunk.
* ``"stream_harmony"`` (``chat_completion/stream_harmony.py@1a5f571f``,
  ``extract_harmony_streaming_delta``): as above, but ``analysis`` + ``functions.*`` is a tool
  call too, ``commentary`` without recipient is ``content``, and empty reasoning is not sent.
* v0.10.1 (``chat_parser="reasoning_and_final"``): ``final`` → ``content``, every other token →
  reasoning (tool-call JSON included, as reported on PR #25514); with ``include_reasoning``
  false non-final tokens are skipped, the last one included, so no ``finish_reason`` chunk is
  sent.

The Harmony branch runs before any ``tool_choice`` logic, so tool deltas do not depend on
``tools`` / ``tool_choice``; ``finish_reason`` is ``tool_calls`` once a tool delta was sent.
A ``HarmonyError`` → ``create_streaming_error_response(str(e))`` (400 ``BadRequestError``)
after the chunks so far, then ``data: [DONE]``.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING

from mockoss.harmony.trace import TokenStep
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.vllm.chat_plan import reasoning_json as _reasoning
from mockoss.profiles.vllm.errors import stream_error_frame
from mockoss.profiles.wire import dumps as _dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile
    from mockoss.profiles.vllm.chat_legacy_plan import LegacyPlan

__all__ = ["stream_legacy"]

_DONE = b"data: [DONE]\n\n"
_FUNCTIONS = "functions."
#: A delta: JSON text pieces and ints, an int being the index of the tool call whose id goes there.
Delta = tuple[str | int, ...]


def _delta(field: str, content: str | None, reasoning: str | None, tools: list[Delta]) -> Delta:
    """``DeltaMessage(...).model_dump_json(exclude_unset=True)``: ``content, reasoning,
    tool_calls``; with ``field="both"`` the alias validator always sets ``reasoning_content``."""
    parts: list[str | int] = []
    members: list[str] = []
    if content is not None:
        members.append('"content":' + _dumps(content))
    if reasoning is not None:
        members.append(_reasoning(field, reasoning))
    elif field == "both":
        members.append('"reasoning_content":null')
    parts.append("{" + ",".join(members))
    if tools:
        parts.append(("," if members else "") + '"tool_calls":[')
        for position, tool in enumerate(tools):
            if position:
                parts.append(",")
            parts.extend(tool)
        parts.append("]")
    parts.append("}")
    return tuple(parts)


def _open_call(index: int, call: int, name: str) -> Delta:
    return ('{"id":"', call, f'","type":"function","index":{index},"function":{{"name":{_dumps(name)},"arguments":""}}}}')


def _args(index: int, arguments: str) -> Delta:
    return (f'{{"index":{index},"function":{{"arguments":{_dumps(arguments)}}}}}',)


def _is_function(recipient: str | None) -> bool:
    return bool(recipient) and recipient.startswith(_FUNCTIONS)  # type: ignore[union-attr]


def _deltas(
    steps: tuple[TokenStep, ...], rule: str, include_reasoning: bool, field: str
) -> tuple[list[Delta | None], int]:
    """One delta (or ``None``: no chunk) per processed token, and the number of tool calls."""
    out: list[Delta | None] = []
    prev: str | None = None
    done_calls = 0  # completed function messages counted by the rule's base_index
    calls = 0
    analysis_calls = rule == "stream_harmony"
    for step in steps:
        channel, recipient, text = step.channel, step.recipient, step.delta or ""
        delta: Delta | None = None
        if rule == "v0.10.1":
            if channel == "final":
                delta = _delta(field, text, None, [])
            elif include_reasoning:
                delta = _delta(field, None, text, [])
            else:
                delta = None
        elif _is_function(recipient) and (channel == "commentary" or (analysis_calls and channel == "analysis")):
            assert recipient is not None
            if prev != recipient:
                delta = _delta(field, None, None, [_open_call(done_calls, calls, recipient.split(_FUNCTIONS, 1)[1])])
                calls += 1
            elif text:
                delta = _delta(field, None, None, [_args(done_calls, text)])
        elif channel == "final" or (analysis_calls and channel == "commentary" and recipient is None):
            delta = _delta(field, text, None, [])
        elif channel == "analysis" and include_reasoning and (text or not analysis_calls):
            delta = _delta(field, None, text, [])
        done = step.completed
        if (
            done is not None
            and _is_function(done.recipient)
            and (done.channel == "commentary" or (analysis_calls and done.channel == "analysis"))
        ):
            done_calls += 1
        prev = recipient
        out.append(delta)
    return out, calls


def _usage(prompt: int, completion: int) -> str:
    return f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion}}}'


#: A delta as the frames carry it: UTF-8 bytes, or bytes and tool-call slots (ints) to join.
Piece = bytes | tuple[bytes | int, ...]


def _pieces(
    deltas: list[Delta | None], failed: bool, rule: str, field: str
) -> tuple[tuple[Piece, ...], tuple[int, ...], Piece | None, bool, bool]:
    """What every request's frames carry of ``deltas``, encoded once per completion and request
    shape: the deltas of the chunks before the last (``None`` deltas skipped: a token with no
    delta sends no chunk), each one's token position (``continuous_usage_stats`` counts the tokens
    done), the finish chunk's delta (``None``: no finish chunk: the stream failed, or v0.10.1 sent
    nothing for the last token; its position is the last), whether a tool delta was sent (then
    ``finish_reason`` is ``tool_calls``), and whether every delta is plain bytes (no tool call id
    to put in). A 10,000-token answer's deltas were joined and encoded again for every request:
    ~24 ms each on the event loop (issue 9, eighth session)."""
    last = len(deltas) - 1
    body: list[Piece] = []
    positions: list[int] = []
    final: Piece | None = None
    streamed = False
    for position, delta in enumerate(deltas):
        is_final = position == last and not failed
        if delta is None and not (is_final and rule != "v0.10.1"):
            continue
        if delta is None:
            piece: Piece = b'{"reasoning_content":null}' if field == "both" else b"{}"
        else:
            streamed = streamed or any(isinstance(p, str) and '"tool_calls"' in p for p in delta)
            if all(isinstance(p, str) for p in delta):
                piece = "".join(delta).encode()  # type: ignore[arg-type]
            else:
                piece = tuple(p.encode() if isinstance(p, str) else p for p in delta)
        if is_final:
            final = piece
        else:
            body.append(piece)
            positions.append(position)
    return tuple(body), tuple(positions), final, streamed, all(p.__class__ is bytes for p in body)


def stream_legacy(
    profile: VllmProfile, completion: Completion, plan: LegacyPlan, request: ChatRequestView, ctx: RequestContext
) -> Reply:
    """SSE frames of 2025 ``chat_completion_stream_generator`` (HTTP 200).

    Role chunk ``{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,
    "finish_reason":null}`` (chunk-level ``"prompt_token_ids":null`` with ``token_ids_fields``);
    a chunk per token with a delta (choice ``…,"logprobs":null,"finish_reason":null,
    "token_ids":null``); the last token's chunk with ``finish_reason`` and ``stop_reason`` (delta
    ``{}`` if the token had none); with ``include_usage`` a ``"choices":[]`` usage chunk;
    ``data: [DONE]``. ``continuous_usage_stats`` adds running usage to every chunk.

    The deltas and their encoded pieces (:func:`_pieces`) are memoised on ``completion``; a request
    joins its head, tool call ids and (``continuous_usage_stats``) running usage around them.
    """
    rule = "v0.10.1" if profile.chat_parser == "reasoning_and_final" else profile.chat_stream
    field = profile.reasoning_field
    key = ("vllm.chat_legacy.sse", completion.cap(request.max_tokens), profile.strict, rule, request.include_reasoning, field, profile.harmony_library)
    cached = completion._memo.get(key)
    if cached is None:
        trace = completion.trace(max_tokens=request.max_tokens, strict=profile.strict, library=profile.harmony_library)
        cached = completion._memo[key] = _deltas(trace.steps, rule, request.include_reasoning, field)
    deltas, calls = cached  # type: ignore[misc]
    request_id = ctx.ids.next("chatcmpl-")
    tool_ids = [ctx.ids.next("chatcmpl-tool-") for _ in range(calls)]
    prompt = ctx.prompt_tokens
    continuous = request.include_usage and request.continuous_usage_stats
    token_ids = ',"token_ids":null' if profile.token_ids_fields else ""
    head = (
        f'data: {{"id":"{request_id}","object":"chat.completion.chunk","created":{ctx.created},'
        f'"model":{_dumps(request.model)},"choices":['
    )
    failed = plan.error is not None
    role = '{"role":"assistant","content":""' + (',"reasoning_content":null}' if field == "both" else "}")
    pieces_key = (*key, "pieces", failed)
    pieces = completion._memo.get(pieces_key)
    if pieces is None:
        pieces = completion._memo[pieces_key] = _pieces(deltas, failed, rule, field)
    body, positions, final, streamed, plain = pieces  # type: ignore[misc]
    usage = (lambda done: ',"usage":' + _usage(prompt, done)) if continuous else (lambda done: "")
    first = head + '{"index":0,"delta":' + role + ',"logprobs":null,"finish_reason":null}]' + usage(0)
    encoded = [(first + (',"prompt_token_ids":null' if profile.token_ids_fields else "") + "}\n\n").encode()]
    open_choice = (head + '{"index":0,"delta":').encode()
    after = ',"logprobs":null,"finish_reason":null' + token_ids + "}]"
    ids = [t.encode() for t in tool_ids]

    def joined(piece: Piece) -> bytes:
        if piece.__class__ is bytes:
            return piece  # type: ignore[return-value]
        return b"".join(p if p.__class__ is bytes else ids[p] for p in piece)  # type: ignore[misc, index, union-attr]

    if continuous:  # running usage in every chunk: the tokens done so far
        encoded += [b"".join((open_choice, joined(p), (after + usage(done + 1) + "}\n\n").encode())) for p, done in zip(body, positions, strict=True)]
    elif plain:
        encoded += map(b"".join, zip(repeat(open_choice), body, repeat((after + "}\n\n").encode())))
    else:
        end = (after + "}\n\n").encode()
        encoded += [b"".join((open_choice, joined(p), end)) for p in body]
    if final is not None:
        finish = "tool_calls" if streamed else plan.finish
        stop = "null" if plan.stop_reason is None else str(plan.stop_reason)
        tail = f',"logprobs":null,"finish_reason":"{finish}","stop_reason":{stop}{token_ids}}}]{usage(len(deltas))}}}\n\n'
        encoded.append(open_choice + joined(final) + tail.encode())
    if failed:
        assert plan.error is not None
        encoded.append(stream_error_frame(400, plan.error, body=profile.error_body))
    elif request.include_usage:
        encoded.append((head + '],"usage":' + _usage(prompt, plan.completion_tokens) + "}\n\n").encode())
    encoded.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(encoded))
