"""The regex parser as it was before the per-token parses were made incremental (mockoss@a5171e4:
mockoss/profiles/llamacpp/regex_parser.py, verbatim below the imports, but for the session 12 fix
for a raw control character inside a JSON string, marked where it is): the reference the differential tests
compare :mod:`mockoss.profiles.llamacpp.regex_parser` and :mod:`.regex_incremental` against (a full parse per call).
"""

from __future__ import annotations

import json
import re

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.wire import dumps as _dump

__all__ = ["parse_regex"]

_CONSTRAINT = r"(?: (<\|constrain\|>)?([a-zA-Z0-9_-]+))"
_RECIPIENT = r"(?: to=functions\.([^<\s]+))"
_TOOL_CALL1 = re.compile(_RECIPIENT + r"<\|channel\|>(analysis|commentary)" + _CONSTRAINT + "?")
_TOOL_CALL2 = re.compile(r"<\|channel\|>(analysis|commentary)" + _RECIPIENT + _CONSTRAINT + "?")
_ANALYSIS = re.compile(r"<\|channel\|>analysis")
_FINAL = re.compile(r"<\|channel\|>final" + _CONSTRAINT + "?")
_PREAMBLE = re.compile(r"<\|channel\|>commentary")
_START = "<|start|>assistant"
_MESSAGE = "<|message|>"
_END = "<|end|>"
_ANALYSIS_START = "<|channel|>analysis<|message|>"
_SPACES = " \t\n\r\v\f"


class _Incomplete(Exception):
    pass


def _parse(text: str, extract_reasoning: bool, tool_calls: bool, out: dict[str, list]) -> None:
    pos = 0
    while True:
        header_start = pos
        found = text.find(_MESSAGE, pos)
        if found == -1:
            raise _Incomplete("incomplete header")
        header = text[pos:found]
        pos = found + len(_MESSAGE)
        match = _TOOL_CALL1.fullmatch(header) or _TOOL_CALL2.fullmatch(header)
        if match is not None:
            name = match.group(1) if match.re is _TOOL_CALL1 else match.group(2)
            body = text[pos:]
            stripped = body.lstrip(_SPACES)
            kind, used, _ = peg.json_value(stripped, 0)
            if kind == peg.NEED:
                raise _Incomplete("incomplete tool call")
            if kind == peg.OK:
                try:  # session 12 fix (not in a5171e4): a raw control character in a string, see regex_parser._strict
                    value = json.loads(stripped[:used])
                except json.JSONDecodeError:
                    if stripped[0] != '"':  # a top-level string is skipped, pos stays
                        raise _Incomplete("healed tool call") from None
                else:
                    pos += len(body) - len(stripped) + used
                    if tool_calls:
                        out["calls"].append((name, _dump(value)))
        elif _ANALYSIS.fullmatch(header):
            pos = header_start
            end = text.find(_END, pos)
            if not extract_reasoning:
                stop = len(text) if end == -1 else end + len(_END)
                out["content"].append(text[pos:stop])
                pos = stop
            else:
                pos += len(_ANALYSIS_START)
                stop = len(text) if end == -1 else end
                reasoning = text[pos:stop].strip(_SPACES)
                if reasoning:
                    out["reasoning"].append(reasoning)
                pos = len(text) if end == -1 else end + len(_END)
                while pos < len(text) and text[pos] in _SPACES:
                    pos += 1
        elif _FINAL.fullmatch(header) or _PREAMBLE.fullmatch(header):
            end = text.find(_END, pos)
            stop = len(text) if end == -1 else end
            out["content"].append(text[pos:stop])
            pos = len(text) if end == -1 else end + len(_END)
        else:
            pos = header_start  # unknown header: LOG_DBG and skip to the next <|start|>assistant
        nxt = text.find(_START, pos)
        if nxt == -1:
            return  # "content after last message" is dropped
        pos = nxt + len(_START)


def parse_regex(text: str, *, extract_reasoning: bool, tool_calls: bool, partial: bool) -> ChatMsg:
    """``common_chat_parse`` with the gpt-oss regex parser over the generated text.

    Args:
        text: the generated text (no generation prompt in front).
        extract_reasoning: ``reasoning_format != none``.
        tool_calls: ``parse_tool_calls`` (tools declared and ``tool_choice != none``).
        partial: a streaming (partial) parse: an incomplete message keeps what was parsed so far;
            a final parse instead falls back to content-only (whole output appended to content,
            tool calls dropped).
    """
    out: dict[str, list] = {"content": [], "reasoning": [], "calls": []}
    try:
        _parse(text, extract_reasoning, tool_calls, out)
    except _Incomplete:
        if not partial:
            out["calls"] = []
            out["content"].append(text)
    return ChatMsg("".join(out["content"]), "".join(out["reasoning"]), tuple(out["calls"]))
