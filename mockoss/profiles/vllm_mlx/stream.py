"""The SSE stream of vllm-mlx's chat completions for gpt-oss: ``server.py``
``stream_chat_completion`` at waybarrios/vllm-mlx@v0.6.0, for the Harmony tool parser and the
gpt-oss reasoning parsers (rules in :mod:`mockoss.profiles.vllm_mlx.chat`).

Per engine output: a non-empty delta (or the finished output) goes through the reasoning parser,
whose content goes through the tool parser once a marker (``<|channel|>commentary``,
``<|call|>``, …) appears in the last 512 characters plus the delta; an empty, unfinished delta
takes the plain path and still sends a chunk with ``"delta":{}``. After the loop: a call the
parser never sent is parsed from the text it saw (``finish_reason: "tool_calls"``, no usage); a
stream whose finish chunk was swallowed gets one (``"delta":{}`` with usage; from 0.5.0,
waybarrios/vllm-mlx#673 for #672; before, the finished output reached the parsers only when it
had text, and a stream whose last text a parser held had no ``finish_reason`` at all).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockoss.profiles.vllm_mlx import parsers as p
from mockoss.profiles.vllm_mlx.engine import coerce_arguments
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["chunk_frames", "finish_frames", "markup_possible"]

_MARKERS = ("<tool_call>", "<|tool_call>", "<function=", "[Calling tool:", "[TOOL_CALLS]", "<minimax:tool_call>", '<invoke name="', "<|channel|>commentary", "<|call|>", "｜DSML｜")
_BRACKET = re.compile(r"\[\w+\(\{")
_BRACKET_PARTIAL = re.compile(r"\[\w+\($")
_TOOL_MARKUP = re.compile(r"</?tool_call>|</?tool_call_reasoning>")


def markup_possible(text: str, fixed: bool = True) -> bool:
    """``_streaming_tool_markup_possible`` for the Harmony parser (no bare-JSON markers); before
    0.4.1 the Harmony markers were not in the list."""
    return any(m in text for m in (_MARKERS if fixed else _MARKERS[:7] + _MARKERS[9:])) or bool(_BRACKET.search(text)) or bool(_BRACKET_PARTIAL.search(text))


def finish_frames(profile: VllmMlxProfile, frames: list[bytes], head: str, include_usage: bool, last_usage: dict[str, int]) -> list[bytes]:
    """``frames`` (:func:`chunk_frames`) with ``stream_options.include_usage``'s chunk and ``data: [DONE]``."""
    if include_usage:
        tail = ',"generation_metadata":null' if profile.chunk_generation_metadata else ""
        frames.append(f'data: {head}[],"usage":{dumps(last_usage)}{tail}}}\n\n'.encode())
    frames.append(b"data: [DONE]\n\n")
    return frames


def chunk_frames(
    profile: VllmMlxProfile, outputs: list[tuple[str, bool, str | None]], head: str, usage_of: Callable[[int], Any],
    new_id: Callable[[], str], tools: list | None, declared: list | None,
) -> tuple[list[bytes], int]:
    """The chunks of the engine's ``outputs`` and the count of the last (the ``completion_tokens``
    of the ``include_usage`` chunk). ``head``: each chunk's text up to its ``choices``;
    ``usage_of(n)``: the usage of a chunk ``n`` outputs in; ``new_id()``: a call's id."""

    tail = ',"generation_metadata":null' if profile.chunk_generation_metadata else ""

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None, choices: bool = True) -> bytes:
        body = f'[{{"index":0,"delta":{dumps(delta)},"finish_reason":{dumps(finish)}}}]' if choices else "[]"
        return f'data: {head}{body},"usage":{dumps(usage)}{tail}}}\n\n'.encode()

    def delta_of(content: str | None = None, reasoning: str | None = None, calls: list | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if content is not None:
            out["content"] = content
        if reasoning is not None:
            out["reasoning_content"] = reasoning
        if calls is not None:
            out["tool_calls"] = calls
        return out

    reasoner: Any = p.REASONING_PARSERS[profile.reasoning_parser][1]() if profile.reasoning_parser is not None else None
    fixed = profile.harmony_call_fix
    guard = profile.stream_finish_guard  # 0.5.0 (#673): finished outputs reach the parsers, closing chunk
    tooler = p.HarmonyToolStream(new_id=new_id, fixed=fixed) if tools is not None and profile.tool_call_parser is not None else None

    frames = [chunk({"role": "assistant"})]
    text = tool_text = ""
    markup = detected = finish_sent = False
    count = 0
    last: tuple[str, bool, str | None] | None = None

    def call_entries(found: list) -> list[dict[str, Any]]:
        return [{"index": i, "id": ident, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for i, ident, c in found]

    for count, output in enumerate(outputs, 1):
        delta, finished, reason = output
        count = min(count, len(outputs) - (outputs[-1][2] == "stop")) if finished and reason == "stop" else count
        last = output
        reasoning: str | None = None
        if reasoner is not None and (delta or (finished and guard)):
            previous, text = text, text + delta
            message = reasoner.feed(previous, text, delta)
            if message is None:
                if not (finished and tooler is not None and markup and guard):
                    continue
                message = p.Delta()
            content, reasoning = message.content or "", message.reasoning
            if tooler is not None and reasoning and not content and markup_possible(tool_text + reasoning, fixed):
                content, reasoning = reasoning, None
            source = content
        else:
            content = p.SPECIAL_TOKENS.sub("", delta) if delta else delta
            source = delta
        if tooler is not None and (source or (finished and markup and guard)):
            if not markup and not markup_possible(tool_text[-512:] + source if source else "", fixed):
                tool_text += source
            else:
                markup = True
                previous, tool_text = tool_text, tool_text + source
                result = tooler.feed(previous, tool_text, source)
                if result is None:
                    if reasoning:
                        frames.append(chunk(delta_of(reasoning=reasoning)))
                    continue
                if "tool_calls" in result:
                    detected = True
                    frames.append(chunk(delta_of(reasoning=reasoning, calls=call_entries(result["tool_calls"]) or None), "tool_calls" if finished else None, usage_of(count) if finished else None))
                    finish_sent = finish_sent or finished
                    continue
                content = _TOOL_MARKUP.sub("", result.get("content", ""))
        finish = ("tool_calls" if detected else reason) if finished else None
        frames.append(chunk(delta_of(content or None, reasoning), finish, usage_of(count) if finished and (detected or reason) else None))
        finish_sent = finish_sent or bool(finish)
    if tooler is not None and tool_text and not detected and markup_possible(tool_text, fixed):
        calls, _ = p.harmony_tool_extract(tool_text, fixed=fixed)
        if calls:
            entries = [{"index": i, "id": new_id(), "type": "function", "function": {"name": c.name, "arguments": coerce_arguments(c.arguments, c.name, declared)}} for i, c in enumerate(calls)]
            frames.append(chunk(delta_of(calls=entries), "tool_calls"))
            finish_sent = True
    if guard and last is not None and last[1] and not finish_sent:
        frames.append(chunk({}, "tool_calls" if detected else (last[2] or "stop"), usage_of(count)))
    return frames, count
