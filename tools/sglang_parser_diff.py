"""Differential check: mockoss's SGLang Harmony parser and gpt-oss tool-call detector against
SGLang's own modules.

Usage: ``python tools/sglang_parser_diff.py /path/to/sglang/srt [RELEASE]`` (the ``sglang/srt``
directory of the unzipped wheel, and its version to compare with ``sglang@RELEASE``; the newest
release when left out: ``pip download --no-deps sglang==0.5.23`` and unzip). ``parser/harmony_parser.py``
is pure Python; ``function_call/gpt_oss_detector.py`` and its base class are loaded with the
imports they do not use for gpt-oss stubbed (the OpenAI protocol models, ``envs``), which needs
``pydantic``, ``orjson`` and ``partial_json_parser`` (a scratch venv, not mockoss's). Not imported by
mockoss or its tests.

For every completion of every built-in scenario (its emitted tokens decoded with special tokens
kept, the stop token trimmed and not, as SGLang's detokenizer does with and without
``--tool-call-parser gpt-oss``) plus a seeded set of generated malformed strings, it compares the
parser's events one-shot (``parse(text)`` then ``parse("")``) and one token's text at a time, and
the tool-call detector's ``detect_and_parse`` and ``parse_streaming_increment`` results (tools: the
``functions.`` names the text mentions, plus ``get_weather``). Prints the counts and the first
differences; exit status 1 when any differ. Run as (mockoss's venv on the path, so its editable
install is seen)::

    /work/sglang-venv/bin/python -c "import site, sys, runpy; site.addsitedir('.venv/lib/python3.11/site-packages'); \\
        sys.argv = ['x', '/tmp/sglang/src/sglang/srt']; runpy.run_path('tools/sglang_parser_diff.py', run_name='__main__')"
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.sglang.detectors import ToolCallStream, parse_tool_calls
from mockoss.profiles.sglang.harmony_text import SglangHarmonyParser
from mockoss.profiles.sglang.releases import SGLANG_TIMELINE
from mockoss.scenario.loader import builtin_names, load_named

PIECES = ["<|start|>", "assistant", "<|channel|>", "analysis", "commentary", "final", " to=functions.get_weather",
          " to=browser.search", "<|constrain|>", "json", "<|message|>", '{"a": 1}', "Hello", " world", "<|end|>",
          "<|call|>", "<|return|>", "assistantfinal", "<|weird|>", "<|", "|>", " ", "\n", "commentary ", "x"]


def _theirs(module, chunks):
    parser = module.HarmonyParser()
    out = []
    for chunk in chunks:
        out += [(e.event_type, e.content, e.raw_text) for e in parser.parse(chunk)]
    return out


def _ours(chunks):
    parser = SglangHarmonyParser()
    out = []
    for chunk in chunks:
        out += [(e.kind, e.content, e.raw) for e in parser.feed(chunk)]
    return out


def texts():
    enc = load_encoding()
    for name in builtin_names():
        for step in load_named(name).steps:
            if step.completion is None:
                continue
            tokens = list(step.completion.emit(None).tokens)
            for keep_stop in (True, False):
                toks = tokens if keep_stop or not tokens else tokens[:-1]
                yield f"{name}{'' if keep_stop else ' (stop trimmed)'}", [enc.decode([t]) for t in toks]
    rng = random.Random(8914)
    for n in range(3000):
        parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 14))]
        yield f"generated[{n}]", parts


@dataclass
class _Function:
    name: str


@dataclass
class _Tool:
    function: _Function
    type: str = "function"


def _load(srt: str, name: str, relative: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, f"{srt}/{relative}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_sglang(srt: str) -> tuple[Any, Any]:
    """SGLang's ``harmony_parser`` module and its function-call ``GptOssDetector`` class."""
    for package in ("sglang", "sglang.srt", "sglang.srt.entrypoints", "sglang.srt.entrypoints.openai", "sglang.srt.function_call", "sglang.srt.parser"):
        sys.modules[package] = types.ModuleType(package)
        sys.modules[package].__path__ = []
    protocol = types.ModuleType("sglang.srt.entrypoints.openai.protocol")
    protocol.Tool, protocol.ToolChoice = _Tool, object
    sys.modules[protocol.__name__] = protocol
    environ = types.ModuleType("sglang.srt.environ")
    environ.envs = types.SimpleNamespace(SGLANG_FORWARD_UNKNOWN_TOOLS=types.SimpleNamespace(get=lambda: False))
    sys.modules[environ.__name__] = environ
    _load(srt, "sglang.srt.function_call.core_types", "function_call/core_types.py")
    _load(srt, "sglang.srt.function_call.utils", "function_call/utils.py")
    harmony = _load(srt, "sglang.srt.parser.harmony_parser", "parser/harmony_parser.py")
    _load(srt, "sglang.srt.function_call.base_format_detector", "function_call/base_format_detector.py")
    detector = _load(srt, "sglang.srt.function_call.gpt_oss_detector", "function_call/gpt_oss_detector.py")
    return harmony, detector.GptOssDetector


def _calls_theirs(detector_class, chunks, names):
    tools = [_Tool(_Function(n)) for n in sorted(names)]
    text = "".join(chunks)
    whole = detector_class().detect_and_parse(text, tools)
    stream, streamed = detector_class(), []
    for chunk in chunks:
        result = stream.parse_streaming_increment(chunk, tools)
        streamed.append((result.normal_text, [(c.tool_index, c.name, c.parameters) for c in result.calls]))
    return (whole.normal_text, [(c.tool_index, c.name, c.parameters) for c in whole.calls]), streamed


def _calls_ours(chunks, names, release):
    """mockoss's detectors with the switch values of ``release`` on the sglang timeline."""
    values = SGLANG_TIMELINE.switches_at(release) if release else {}
    hyphenated = values.get("hyphenated_tool_names", True)
    text, calls = parse_tool_calls("".join(chunks), frozenset(names), hyphenated=hyphenated)
    stream = ToolCallStream(frozenset(names), plain_text_passthrough=values.get("stream_plain_text_passthrough", True), hyphenated=hyphenated)
    streamed = [(t, [(c.index, c.name, c.arguments) for c in cs]) for t, cs in map(stream.feed, chunks)]
    return (text, [(c.index, c.name, c.arguments) for c in calls]), streamed


def main() -> int:
    harmony, detector_class = load_sglang(sys.argv[1].rstrip("/"))
    release = sys.argv[2] if len(sys.argv) > 2 else None  # the wheel's version: compare with sglang@RELEASE
    total = differ = calls_total = calls_differ = 0
    for label, chunks in texts():
        text = "".join(chunks)
        for mode, feed in (("one-shot", [text, ""]), ("streamed", [*chunks, ""])):
            total += 1
            theirs, ours = _theirs(harmony, feed), _ours(feed)
            if theirs != ours:
                differ += 1
                if differ <= 5:
                    print(f"DIFF {label} {mode}: {text!r}\n  sglang:  {theirs}\n  mockoss: {ours}")
        names = {"get_weather", *re.findall(r"to=functions\.([A-Za-z0-9_.-]+)", text)}
        calls_total += 1
        theirs, ours = _calls_theirs(detector_class, chunks, names), _calls_ours(chunks, names, release)
        if theirs != ours:
            calls_differ += 1
            if calls_differ <= 5:
                print(f"DIFF tool calls {label}: {text!r}\n  sglang:  {theirs}\n  mockoss: {ours}")
    print(f"{total} parses compared, {differ} differ; {calls_total} tool-call detections compared (whole and streamed), {calls_differ} differ")
    return 1 if differ or calls_differ else 0


if __name__ == "__main__":
    sys.exit(main())
