"""TensorRT-LLM's Harmony adapter rules: openai-harmony's parser output → OpenAI message and deltas.

TensorRT-LLM parses gpt-oss with openai-harmony itself (``StreamableParser`` when streamed,
``parse_messages_from_completion_tokens`` when not); what is its own is the mapping, reproduced
here from ``NVIDIA/TensorRT-LLM@38134b130944ed5c037949456df20300126ec728:tensorrt_llm/serve/harmony_adapter.py``
(``HarmonyStreamState``, ``HarmonyAdapter.harmony_output_to_openai``,
``_apply_harmony_to_openai_mapping``, ``_parse_tool_call_from_harmony_message``,
``_is_tool_call_allowed``, ``_strip_incomplete_messages``, ``_check_channel_valid``) and, for the
later fixes, from the tests that pin them (``tests/unittest/llmapi/apps/test_harmony_parsing.py``
at ``2d6bc80262dd1d2c073bbcd2fb3bb57b39c305b7``): the switches name them. The parser is never run
here: profiles read :class:`mockoss.harmony.ParserTrace` steps (the state after each
``process(token)``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from openai_harmony import Message, TextContent

from mockoss.harmony.trace import ParserTrace

__all__ = ["StreamState", "ToolFilter", "check_channel_valid", "map_messages", "merge_deltas", "strip_incomplete", "tool_call"]

START, MESSAGE = 200006, 200008
PREAMBLE_OPEN, PREAMBLE_CLOSE = "<|channel|>commentary<|message|>", "<|end|>"


def check_channel_valid(generated: list[str], channel: str | None) -> bool:
    """``_check_channel_valid`` (from NVIDIA/TensorRT-LLM PR #7849): record ``channel`` unless it
    repeats the last one; invalid once both ``analysis`` and ``final`` were seen and a third entry
    is recorded. Mutates ``generated``."""
    if not generated or generated[-1] != channel:
        generated.append(channel)  # type: ignore[arg-type]
    return not ("analysis" in generated and "final" in generated and len(generated) > 2)


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """Which called names survive: ``tool_choice: "none"`` drops every call, declared tools keep
    theirs, no tools keeps all (``HarmonyStreamState.__init__``, ``harmony_output_to_openai``)."""

    active: bool = False
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tools: Iterable[str] | None, tool_choice: Any) -> ToolFilter:
        """``tools``: declared function names, ``None`` when the request declares none."""
        if tool_choice == "none":
            return cls(True, frozenset())
        if tools is None:
            return cls()
        return cls(True, frozenset(t for t in tools if t))

    def allows(self, name: str) -> bool:
        return not self.active or name in self.names


def _recipient_is_call(channel: str | None, recipient: str | None, *, analysis_calls: bool) -> bool:
    """Streamed: a ``functions.`` recipient is a call on commentary, and (from PR #12046) on
    analysis too; a bare recipient (``python``, ``browser.search``) on commentary is one from #12046 on
    (before, that text went out as preamble content)."""
    if not recipient:
        return False
    if "functions." in recipient:
        return channel == "commentary" or (analysis_calls and channel == "analysis")
    return analysis_calls and channel == "commentary" and recipient != "assistant"


@dataclass(slots=True)
class StreamState:
    """``HarmonyStreamState``: per-token deltas (``{"reasoning"}``, ``{"content"}`` with or without
    ``tool_calls: []``, ``{"tool_calls": [...]}``, ``{"should_stop"}``) for one request.

    ``new_call_id`` makes a tool call id (``call_`` + 8 hex digits upstream).
    """

    tools: ToolFilter
    new_call_id: Callable[[], str]
    analysis_calls: bool = True
    validate: bool = True
    generated: list[str] = field(default_factory=list)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str | None = None
    started: bool = False
    preamble_seen: bool = False
    prev: tuple[str | None, str | None] = (None, None)

    def batch(self, trace: ParserTrace, start: int, stop: int, failed: bool = False) -> list[dict[str, Any]] | None:
        """Deltas of the parser steps ``start:stop`` (``process_token_batch``), or ``None`` when
        ``failed``: the parser raised on the token after them, the rest of the batch was never fed,
        and ``stateful_stream_harmony_tokens_to_openai_deltas`` logged and returned ``[]`` (the
        steps still moved the state on)."""
        deltas: list[dict[str, Any]] = []
        for step in trace.steps[start:stop]:
            prev_channel, prev_recipient = self.prev
            self.prev = (step.channel, step.recipient)
            if (prev_channel, prev_recipient) != self.prev:
                if prev_channel == "commentary" and prev_recipient and "functions." in prev_recipient:
                    name = prev_recipient.split("functions.")[-1]
                    for info in self.calls.values():
                        if info["name"] == name:
                            info["active"] = False
                if self.state == "commentary_preamble" and self.started:
                    deltas.append({"content": PREAMBLE_CLOSE, "tool_calls": []})
                self.started, self.state = False, None
            if step.delta:
                delta = self.delta_from_parser(step.channel, step.recipient, step.delta)
                if delta:
                    deltas.append(delta)
        return None if failed else deltas

    def delta_from_parser(self, channel: str | None, recipient: str | None, text: str) -> dict[str, Any] | None:
        """``_create_delta_from_parser_state`` for a token that added ``text`` to a message on
        ``channel`` addressed to ``recipient``: the adapter delta, or ``None`` (a filtered call, an
        unknown channel)."""
        if self.validate and not check_channel_valid(self.generated, channel):
            return {"should_stop": "Repeated message"}
        if _recipient_is_call(channel, recipient, analysis_calls=self.analysis_calls):
            name = recipient.split("functions.")[-1] if "functions." in recipient else recipient  # type: ignore[union-attr]
            self.state = "commentary_tool"
            if not self.tools.allows(name):
                return None
            call_id = self._call_id(name)
            return {"tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}, "index": self.calls[call_id]["index"]}]}
        if channel == "analysis":
            self.state = "analysis"
            return {"reasoning": text}
        if channel == "commentary":
            self.preamble_seen, self.state = True, "commentary_preamble"
            if not self.started:
                self.started = True
                return {"content": PREAMBLE_OPEN + text, "tool_calls": []}
            return {"content": text, "tool_calls": []}
        if channel == "final":
            self.state = "final"
            return {"content": text, "tool_calls": []} if self.preamble_seen else {"content": text}
        return None

    def _call_id(self, name: str) -> str:
        for call_id, info in self.calls.items():
            if info["name"] == name and info["active"]:
                return call_id
        call_id = self.new_call_id()
        self.calls[call_id] = {"name": name, "index": len(self.calls), "active": True}
        return call_id


def merge_deltas(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``HarmonyStreamState._merge_consecutive_deltas`` (PR #12292), as its tests pin it: runs of
    pure reasoning deltas, of content deltas with the same keys (``tool_calls`` empty), and of pure
    tool-call deltas of one call id are joined; ``should_stop`` and mixed deltas never are."""
    out: list[dict[str, Any]] = []
    for delta in deltas:
        prev = out[-1] if out else None
        if prev is not None and prev.keys() == delta.keys():
            keys = set(delta)
            if keys == {"reasoning"}:
                prev["reasoning"] += delta["reasoning"]
                continue
            if "content" in keys and keys <= {"content", "tool_calls"} and not delta.get("tool_calls") and not prev.get("tool_calls"):
                prev["content"] += delta["content"]
                continue
            if keys == {"tool_calls"} and prev["tool_calls"][0].get("id") == delta["tool_calls"][0].get("id"):
                merged = dict(prev["tool_calls"][0])
                function = dict(merged.get("function", {}))
                function["arguments"] = function.get("arguments", "") + delta["tool_calls"][0].get("function", {}).get("arguments", "")
                merged["function"] = function
                prev["tool_calls"] = [merged]
                continue
        out.append(dict(delta))
    return out


def strip_incomplete(tokens: tuple[int, ...]) -> tuple[int, ...]:
    """``_strip_incomplete_messages``: drop a trailing ``<|start|>`` whose header never reached
    ``<|message|>``, repeatedly."""
    clean = tokens
    while START in clean:
        last = len(clean) - 1 - clean[::-1].index(START)
        if MESSAGE in clean[last + 1 :]:
            break
        clean = clean[:last]
    return clean


def _text(message: Message) -> str:
    return "".join(part.text if isinstance(part, TextContent) else str(part) for part in message.content)


def tool_call(message: Message, call_id: str, *, strip_code_prefix: bool) -> dict[str, Any] | None:
    """``_parse_tool_call_from_harmony_message``: no call without a recipient other than
    ``assistant``; ``<|constrain|>json`` needs arguments that
    ``json.loads`` accepts (else the call is dropped); ``code`` keeps the recipient as name (PR
    #12046 strips ``functions.``); any other content type drops the call."""
    if not message.recipient or message.recipient == "assistant":
        return None
    recipient, content_type, args = str(message.recipient), message.content_type or "", _text(message)
    if "<|constrain|>json" in content_type:
        try:
            json.loads(args)
        except ValueError:
            return None
        name = recipient.split("functions.")[-1]
    elif "code" in content_type:
        name = recipient.split("functions.")[-1] if strip_code_prefix else recipient
    else:
        return None
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _builtin_or_allowed(name: str, tools: ToolFilter) -> bool:
    """``_is_tool_call_allowed``: ``python`` and names holding ``browser`` or ``container`` always pass."""
    return name == "python" or "browser" in name or "container" in name or tools.allows(name)


def map_messages(
    messages: Iterable[Message], tools: ToolFilter, new_call_id: Callable[[], str], *, analysis_calls: bool, validate: bool = True
) -> dict[str, Any]:
    """``harmony_output_to_openai`` after a successful parse: group the messages (skipping those
    ``_check_channel_valid`` refuses, when ``validate``: PR #7849) and apply ``_apply_harmony_to_openai_mapping``. Returns the
    message dict: ``role``, ``content``, ``reasoning`` when there was analysis text, ``tool_calls``
    (a list, ``[]`` when only preambles) when there were calls or preambles."""
    analysis, preambles, calls, final = "", [], [], ""
    generated: list[str] = []
    for message in messages:
        channel, recipient = message.channel, message.recipient
        if validate and not check_channel_valid(generated, channel):
            continue
        is_call = bool(recipient) and recipient != "assistant" and (channel == "commentary" or (analysis_calls and channel == "analysis" and "functions." in str(recipient)))
        if is_call:
            call = tool_call(message, new_call_id(), strip_code_prefix=analysis_calls)
            if call is not None and _builtin_or_allowed(call["function"]["name"], tools):
                calls.append(call)
        elif channel == "analysis":
            analysis += _text(message)
        elif channel == "commentary":
            preambles.extend(part.text if isinstance(part, TextContent) else str(part) for part in message.content)
        elif channel in ("final", None):
            final += _text(message)
    parts = []
    preamble = "\n".join(preambles).strip()
    if preamble:
        parts.append(f"{PREAMBLE_OPEN}{preamble}{PREAMBLE_CLOSE}")
    if final.strip():
        parts.append(final.strip())
    combined = "\n".join(parts)
    result: dict[str, Any] = {"role": "assistant"}
    if analysis.strip():
        result["reasoning"] = analysis.strip()
    if calls:
        result["content"], result["tool_calls"] = combined or None, calls
    elif preambles:
        result["content"], result["tool_calls"] = combined, []
    else:
        result["content"] = combined
    return result
