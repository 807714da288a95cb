"""vllm-mlx's own Harmony string code, reproduced: its two gpt-oss reasoning parsers, its Harmony
tool-call parser and the gpt-oss branch of its output cleaner.

vllm-mlx does not parse gpt-oss output with openai-harmony (it uses that library only to render
prompts, ``utils/harmony_render.py``); it parses the detokenized *text* with regular expressions.
Sources, all at waybarrios/vllm-mlx@v0.6.0 (the PyPI wheel ``vllm_mlx-0.6.0``):

* ``vllm_mlx/reasoning/gpt_oss_parser.py`` (``--reasoning-parser gpt_oss``): :func:`gpt_oss_extract`,
  :class:`GptOssReasoningStream`. The first ``<|channel|>analysis…<|message|>`` /
  ``<|channel|>final…<|message|>`` header (the pattern also takes ``<|constrain|>`` in the header)
  opens a span that ends at the next structural token; spans are stripped. Streaming is stateless:
  a "phase" recomputed from the whole text on every delta; a commentary channel after analysis is
  the "transition" phase and emits nothing.
* ``vllm_mlx/reasoning/harmony_parser.py`` (``--reasoning-parser harmony``): :func:`harmony_extract`
  (every ``analysis…<|end|>`` block joined by newlines; ``final…<|return|>``), and
  :class:`HarmonyReasoningStream`, a state machine keyed on substrings of each *delta*.
* ``vllm_mlx/tool_parsers/harmony_tool_parser.py`` (``--tool-call-parser harmony`` or ``gpt-oss``):
  :func:`harmony_tool_extract` and :class:`HarmonyToolStream`. A call is
  ``<|channel|>commentary to=functions.NAME [<|constrain|>X] <|message|>ARGS`` ended by
  ``<|call|>``, ``<|end|>``, ``<|return|>``, ``<|start|>``, the next ``<|channel|>`` or the end of
  the text; JSON objects are re-serialised (``json.dumps``, ``ensure_ascii=False``), other JSON
  values become ``str(value)``; unparsable arguments are kept raw after an explicit end token and
  dropped otherwise (waybarrios/vllm-mlx#562). The recipient must follow the channel; only
  ``\\w`` names.
* ``vllm_mlx/api/utils.py`` ``clean_output_text`` / ``_clean_gpt_oss_output``: with both
  ``<|channel|>`` and ``<|message|>`` in the text, keep what follows the *first* final-channel
  header, else strip channel headers (their words up to ``<``), ``<|start|>`` with the role word,
  ``<|return|>``, ``<|call|>`` and ``<|constrain|>…``: ``<|end|>`` and ``<|message|>`` survive.
* ``vllm_mlx/server.py`` ``_strip_harmony_analysis_blocks``.

Checked against the modules themselves by ``tools/vllm_mlx_diff.py`` (see the package docstring).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "REASONING_PARSERS",
    "SPECIAL_TOKENS",
    "Delta",
    "GptOssReasoningStream",
    "HarmonyReasoningStream",
    "HarmonyToolStream",
    "ToolCallText",
    "clean_output_text",
    "gpt_oss_extract",
    "harmony_extract",
    "harmony_tool_extract",
    "json_fallback_calls",
    "strip_analysis_blocks",
    "tool_calls_with_fallback",
]

_STRUCTURAL = re.compile(r"<\|start\|>|<\|end\|>|<\|channel\|>|<\|return\|>|<\|call\|>|<\|constrain\|>")
_GPT_OSS_HEADER = re.compile(r"<\|channel\|>(analysis|final)(?:[^<]*(?:<\|constrain\|>[^<]*)?)?<\|message\|>")
_H_ANALYSIS = re.compile(r"<\|channel\|>analysis\s*<\|message\|>(.*?)<\|end\|>", re.DOTALL)
_H_FINAL = re.compile(r"<\|channel\|>final\s*<\|message\|>(.*?)<\|return\|>", re.DOTALL)
_CALL = re.compile(
    r"<\|channel\|>commentary\s+to=functions\.(\w+)(?:\s*<\|constrain\|>\w+)?\s*<\|message\|>((?:(?!<\|channel\|>).)*?)"
    r"(?P<end><\|call\|>|<\|end\|>|<\|return\|>|<\|start\|>|<\|channel\|>|\Z)",
    re.DOTALL,
)
#: Before waybarrios/vllm-mlx#562 (0.4.1) a call had to end in ``<|call|>``, which the engine never
#: writes (an EOS token): no gpt-oss call was ever found.
_CALL_BEFORE_562 = re.compile(r"<\|channel\|>commentary\s+to=functions\.(\w+)(?:\s*<\|constrain\|>\w+)?\s*<\|message\|>(.*?)(?P<end><\|call\|>)", re.DOTALL)
_CLEAN_FINAL = re.compile(r"<\|channel\|>final[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>")
_CLEAN_TAIL = re.compile(r"<\|start\|>|<\|end\|>|<\|channel\|>|<\|return\|>|<\|call\|>|<\|message\|>|<\|constrain\|>")
_CLEAN_NO_FINAL = re.compile(r"<\|channel\|>[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>|<\|start\|>[^<]*|<\|return\|>|<\|call\|>|<\|constrain\|>[^<]*")
_ANALYSIS_BLOCK = re.compile(r"<\|channel\|>analysis[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>.*?(?=<\|channel\|>|<\|end\|>|\Z)", re.DOTALL)
_CONTROL = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>")

#: ``api/utils.py`` ``SPECIAL_TOKENS_PATTERN``: stripped from every streamed delta when no
#: reasoning parser runs (the Harmony ones and other families' markers).
SPECIAL_TOKENS = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<\|endoftext\|>|<\|end\|>|<\|eot_id\|>|<\|start_header_id\|>|<\|end_header_id\|>|"
    r"<\|channel\|>|<\|message\|>|<\|start\|>|<\|return\|>|<\|call\|>|<\|constrain\|>|</s>|<s>|<pad>|\[PAD\]|\[SEP\]|\[CLS\]|"
    r"\[e~\[|\]~b\][a-z]*|\]~!b\[|</?tool_call_reasoning>"
)


@dataclass(frozen=True, slots=True)
class Delta:
    """A reasoning parser's answer for one streamed delta (``reasoning/base.py`` ``DeltaMessage``)."""

    content: str | None = None
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallText:
    """A call found by a tool parser: ``arguments`` is the text before the server's schema-typed
    coercion, which applies only to the Harmony parser's calls (``coerce``)."""

    name: str
    arguments: str
    coerce: bool = True


def clean_output_text(text: str) -> str:
    """``clean_output_text`` for gpt-oss text (non-Harmony text: special tokens stripped, trimmed).
    The ``<think>`` re-opening of other families is left out (gpt-oss never writes ``</think>``
    itself; a scripted one would differ)."""
    if not text:
        return text
    if "<|channel|>" in text and "<|message|>" in text:
        match = _CLEAN_FINAL.search(text)
        if match:
            return _CLEAN_TAIL.sub("", text[match.end() :]).strip()
        return _CLEAN_NO_FINAL.sub("", text).strip()
    text = SPECIAL_TOKENS.sub("", text).strip()
    return "<think>" + text if "</think>" in text and not text.lstrip().startswith("<think>") else text


def strip_analysis_blocks(text: str) -> str:
    """``server.py`` ``_strip_harmony_analysis_blocks``: drop analysis headers and their text up to
    the next ``<|channel|>`` or ``<|end|>`` (which stays)."""
    return _ANALYSIS_BLOCK.sub("", text)


# --------------------------------------------------------------------------- gpt_oss reasoning


def _gpt_oss_span(text: str, channel: str) -> str | None:
    for match in _GPT_OSS_HEADER.finditer(text):
        if match.group(1) == channel:
            end = _STRUCTURAL.search(text, match.end())
            span = (text[match.end() : end.start()] if end else text[match.end() :]).strip()
            return span or None
    return None


def gpt_oss_extract(text: str) -> tuple[str | None, str | None]:
    """``GptOssReasoningParser.extract_reasoning``: ``(reasoning, content)``; text without
    ``<|channel|>`` (or with no analysis/final span) is all content."""
    if not text or "<|channel|>" not in text:
        return None, text or None
    reasoning, content = _gpt_oss_span(text, "analysis"), _gpt_oss_span(text, "final")
    if content:
        content = _STRUCTURAL.sub("", content.replace("<|return|>", "").strip()).strip() or None
    if reasoning:
        reasoning = _STRUCTURAL.sub("", reasoning).strip() or None
    if reasoning is None and content is None:
        return None, text
    return reasoning, content


def _phase(text: str) -> str:
    matches = list(_GPT_OSS_HEADER.finditer(text))
    if not matches:
        return "init"
    last = matches[-1]
    if last.group(1) == "final":
        return "final"
    return "transition" if _STRUCTURAL.search(text[last.end() :]) else "analysis"


class GptOssReasoningStream:
    """``GptOssReasoningParser.extract_reasoning_streaming`` (stateless: phases from the text; here
    kept up to date delta by delta, the same phases: :mod:`mockoss.profiles.vllm_mlx.phase`)."""

    def __init__(self) -> None:
        from mockoss.profiles.vllm_mlx.phase import PhaseTracker

        self._phases = PhaseTracker(_GPT_OSS_HEADER, _STRUCTURAL)

    def feed(self, previous: str, current: str, delta: str) -> Delta | None:
        before, now = self._phases.phases(previous, current, delta)
        if now != before and now in ("analysis", "final"):
            tail = next((current[m.end() :] for m in reversed(list(_GPT_OSS_HEADER.finditer(current))) if m.group(1) == now), None)
            if tail:
                tail = tail.replace("<|return|>", "")
                return Delta(reasoning=tail) if now == "analysis" else Delta(content=tail)
            return None
        if now in ("analysis", "final"):
            cleaned = _STRUCTURAL.sub("", delta.replace("<|return|>", ""))
            if cleaned:
                return Delta(reasoning=cleaned) if now == "analysis" else Delta(content=cleaned)
        return None


# --------------------------------------------------------------------------- harmony reasoning


def harmony_extract(text: str) -> tuple[str | None, str | None]:
    """``HarmonyReasoningParser.extract_reasoning``: analysis blocks closed by ``<|end|>`` joined by
    ``\\n``; the first final block closed by ``<|return|>`` (never there once the engine stopped on
    ``<|return|>``)."""
    reasoning = "\n".join(block.strip() for block in _H_ANALYSIS.findall(text)) or None
    final = _H_FINAL.search(text)
    return reasoning, final.group(1).strip() if final else None


@dataclass(slots=True)
class HarmonyReasoningStream:
    """``HarmonyReasoningParser.extract_reasoning_streaming``: per-delta substring tests."""

    channel: str | None = None
    in_message: bool = False

    def feed(self, previous: str, current: str, delta: str) -> Delta | None:
        if "<|channel|>" in delta:
            for name in ("analysis", "final", "commentary"):
                if name in delta:
                    self.channel, self.in_message = name, False
                    return None
        if self.channel is None and "<|channel|>" in current:
            after = current[current.rfind("<|channel|>") + len("<|channel|>") :]
            self.channel = next((n for n in ("analysis", "final", "commentary") if after.startswith(n)), None)
        if "<|message|>" in delta:
            self.in_message = True
            return None
        if any(t in delta for t in ("<|end|>", "<|return|>", "<|call|>", "<|start|>")):
            self.in_message = False
            return None
        if delta.strip().startswith("<|") and delta.strip().endswith("|>"):
            return None
        if self.in_message and self.channel == "analysis":
            return Delta(reasoning=delta)
        if self.in_message and self.channel == "final":
            return Delta(content=delta)
        return None


# --------------------------------------------------------------------------- harmony tool calls


def _strip_control(text: str) -> str:
    for token in _CONTROL:
        text = text.replace(token, "")
    text = re.sub(r"(?:analysis|commentary|final)\s*", "", text)
    text = re.sub(r"to=functions\.\w+\s*", "", text)
    return re.sub(r"json\s*", "", text).strip()


def harmony_tool_extract(text: str, *, fixed: bool = True) -> tuple[list[ToolCallText], str]:
    """``HarmonyToolParser.extract_tool_calls``: ``(calls, content)``. With calls, ``content`` is the
    first final block closed by ``<|return|>`` or ``""`` (the server sends ``result.content or ""``);
    without, that block or the whole text with control tokens and the words ``analysis``,
    ``commentary``, ``final``, ``to=functions.x``, ``json`` removed (anywhere, prose included)."""
    calls: list[ToolCallText] = []
    for match in (_CALL if fixed else _CALL_BEFORE_562).finditer(text):
        args = match.group(2).strip()
        try:
            value = json.loads(args)
        except json.JSONDecodeError:
            if match.group("end") in ("", "<|channel|>"):
                continue
            calls.append(ToolCallText(match.group(1), args))
            continue
        calls.append(ToolCallText(match.group(1), json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value)))
    final = _H_FINAL.search(text)
    content = final.group(1).strip() if final else None
    if calls:
        return calls, content or ""
    return calls, content if content is not None else _strip_control(text)


@dataclass(slots=True)
class HarmonyToolStream:
    """``HarmonyToolParser.extract_tool_calls_streaming``: returns ``{"content": …}``,
    ``{"tool_calls": [ToolCallText, …]}`` (with their positions in the whole-text parse) or
    ``None``. A call is re-parsed from the whole text when a delta holds an end token or the text
    first reaches ``<|channel|>final``; a call already sent (same name and arguments) is not sent
    again."""

    sent: set[tuple[str, str]] = field(default_factory=set)
    new_id: Callable[[], str] | None = None
    fixed: bool = True

    def feed(self, previous: str, current: str, delta: str) -> dict | None:
        if self.fixed and "<|channel|>" not in current:
            return {"content": delta}
        if self.fixed:
            done = any(t in delta for t in ("<|call|>", "<|end|>", "<|return|>", "<|start|>"))
            done = done or ("<|channel|>final" in current and "<|channel|>final" not in previous)
        else:  # 0.4.0: only <|call|> completes a call, every call is sent again
            done = "<|call|>" in delta
            self.sent.clear()
        if done:
            calls, _ = harmony_tool_extract(current, fixed=self.fixed)
            fresh = []
            for index, call in enumerate(calls):
                ident = self.new_id() if self.new_id else ""  # every parse draws an id per call
                if (call.name, call.arguments) not in self.sent:
                    self.sent.add((call.name, call.arguments))
                    fresh.append((index, ident, call))
            if fresh:
                return {"tool_calls": fresh}
        if "<|channel|>final" in current and "<|call|>" not in current and "<|message|>" in current:
            start = current.find("<|message|>", current.rfind("<|channel|>final"))
            if start >= 0:
                body = current[start + len("<|message|>") :].replace("<|return|>", "").strip()
                if body and delta.strip() not in _CONTROL:
                    return {"content": delta}
        return {"content": delta} if "<|channel|>" not in current else None


# --------------------------------------------------------------------------- generic fallback


def _is_call(obj: object) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and bool(obj["name"]) and isinstance(obj.get("arguments", 0), (dict, str))


def json_fallback_calls(text: str) -> list[ToolCallText]:
    """The raw-JSON branch of ``api/tool_calling.py`` ``parse_tool_calls`` (the generic parser
    ``_parse_tool_calls_with_parser`` falls back to when the Harmony parser finds no call, tools
    declared): a JSON array of ``{"name", "arguments"}`` objects, else every balanced
    ``{…}`` in the text that decodes to one; arguments ``json.dumps``-ed with its defaults
    (``", "``, ``": "``, ASCII escapes) when an object, else ``str()``. The other formats of that
    parser (MiniMax, ``[Calling tool:``, ``<tool_call>``, ``<function=``, Nemotron) are not
    reproduced: :func:`tool_calls_with_fallback` leaves text holding their markers alone."""
    text = (text or "").strip()
    found: list[dict] = []
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and parsed and all(_is_call(item) for item in parsed):
            found = parsed
    if not found:
        depth, start = 0, None
        for i, char in enumerate(text):
            if char == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    try:
                        obj = json.loads(text[start : i + 1])
                    except json.JSONDecodeError:
                        obj = None
                    if _is_call(obj):
                        found.append(obj)
                    start = None
    args = [json.dumps(o["arguments"]) if isinstance(o["arguments"], dict) else str(o["arguments"]) for o in found]
    return [ToolCallText(o["name"], a, coerce=False) for o, a in zip(found, args, strict=True)]


def tool_calls_with_fallback(
    text: str, *, fixed: bool = True, tools_declared: bool = True, harmony: bool = True
) -> tuple[list[ToolCallText], str]:
    """``_parse_tool_calls_with_parser``: ``(calls, content)``. With the Harmony parser
    (``harmony``): its calls and content, else (tools declared) the generic parser's raw-JSON calls
    with content ``""``, else no calls and the Harmony parser's content. Without a configured
    parser only the generic one runs (no calls: the text untouched)."""
    calls, content = harmony_tool_extract(text, fixed=fixed) if harmony else ([], text)
    if calls or not tools_declared:
        return calls, content
    if not any(marker in text for marker in ("<minimax:tool_call>", "[Calling tool:", "<tool_call>", "<function=")):
        fallback = json_fallback_calls(text)
        if fallback:
            return fallback, ""
    return [], content


#: ``--reasoning-parser`` name -> (the whole-text extractor, the streaming parser class).
REASONING_PARSERS: dict[str, tuple[Callable[[str], tuple[str | None, str | None]], type[GptOssReasoningStream | HarmonyReasoningStream]]] = {
    "gpt_oss": (gpt_oss_extract, GptOssReasoningStream),
    "harmony": (harmony_extract, HarmonyReasoningStream),
}
