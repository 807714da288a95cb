"""SGLang's text fallback for gpt-oss output whose markers were stripped (``TextStrategy`` in
sgl-project/sglang@v0.5.23:python/sglang/srt/parser/harmony_parser.py): ``analysis…assistantfinal…``
parsed with its regular expressions. Used by :class:`.harmony_text.SglangHarmonyParser` when the
first text that settles the strategy holds a header word and no ``<|channel|>``/``<|start|>``.
"""

from __future__ import annotations

import re

from mockoss.profiles.sglang.harmony_scan import Event, hold_partial

__all__ = ["FINAL_WORD", "TEXT_FORMAT", "holds_all", "text_parse"]

_FLAGS = re.IGNORECASE | re.DOTALL
_BOTH = re.compile(r"^\s*(?:assistant)?\s*(analysis|commentary)(.*?)\s*assistantfinal\s*(.*)\s*$", _FLAGS)
_FINAL = re.compile(r"^\s*assistantfinal\s*(.*)\s*$", _FLAGS)
_OPEN = re.compile(r"^\s*(?:assistant)?\s*(analysis|commentary)(.*)\s*$", _FLAGS)
_HEADER_WORD = re.compile(r"(?:^|\s)(?:assistant)?\s*(analysis|commentary)", re.IGNORECASE)
#: A header word anywhere: picks this fallback while no marker has picked the canonical parse.
TEXT_FORMAT = re.compile(r"(?:^|\s)(?:assistant)?\s*(analysis|commentary|assistantfinal)", re.IGNORECASE)
#: ``assistantfinal`` as ``_BOTH`` matches it.
FINAL_WORD = re.compile("assistantfinal", re.IGNORECASE)


def holds_all(text: str) -> bool:
    """Whether :func:`text_parse` holds ``text`` whole for want of ``assistantfinal`` (its rule
    for a header word and ``assistantfin`` without ``al``)."""
    lowered = text.lower()
    return not _BOTH.match(text) and bool(_HEADER_WORD.search(text)) and "assistantfin" in lowered and "assistantfinal" not in lowered


def text_parse(text: str) -> tuple[list[Event], str]:
    """Parse the fallback form without markers (``analysis…assistantfinal…``):
    ``(events, rest to keep)``."""
    both = _BOTH.match(text)
    if both:
        channel, thought, answer = both.groups()
        events = []
        if thought.strip():
            events.append(Event("reasoning" if channel.lower() == "analysis" else "normal", thought.strip()))
        if answer.strip():
            events.append(Event("normal", answer.strip()))
        return events, ""
    lowered = text.lower()
    if _HEADER_WORD.search(text) and "assistantfin" in lowered and "assistantfinal" not in lowered:
        return [], text
    final = _FINAL.match(text)
    if final:
        return ([Event("normal", final.group(1).strip())] if final.group(1).strip() else []), ""
    opened = _OPEN.match(text)
    if opened:
        channel, body = opened.groups()
        emit, hold = hold_partial(body, ("assistantfinal",))
        kept = text[: opened.start(2)] + hold
        if emit and channel.lower() == "analysis":
            return [Event("reasoning", emit)], (kept if hold else channel)
        if emit:
            return [Event("normal", emit if hold else emit.strip())], (kept if hold else "")
        return [], kept
    emit, hold = hold_partial(text, ("analysis", "commentary", "assistantfinal"))
    return ([Event("normal", emit)] if emit else []), hold
