"""Differential check: mockoss's SGLang Harmony parser against SGLang's own module.

Usage: ``python tools/sglang_parser_diff.py /path/to/sglang/srt/parser/harmony_parser.py``
(the file from the sglang wheel, e.g. ``pip download --no-deps sglang==0.5.23`` and unzip; it is
pure Python and imports nothing from sglang). It is not imported by mockoss or its tests.

For every completion of every built-in scenario (its emitted tokens decoded with special tokens
kept, the stop token trimmed and not, as SGLang's detokenizer does with and without
``--tool-call-parser gpt-oss``) plus a seeded set of generated malformed strings, it compares:
one-shot parsing (``parse(text)`` then ``parse("")``), and streaming one token's text at a time.
Prints the counts and the first differences; exit status 1 when any differ.
"""

from __future__ import annotations

import importlib.util
import random
import sys

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.sglang.harmony_text import SglangHarmonyParser
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


def main() -> int:
    spec = importlib.util.spec_from_file_location("sglang_harmony_parser", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    total = differ = 0
    for label, chunks in texts():
        text = "".join(chunks)
        for mode, feed in (("one-shot", [text, ""]), ("streamed", [*chunks, ""])):
            total += 1
            theirs, ours = _theirs(module, feed), _ours(feed)
            if theirs != ours:
                differ += 1
                if differ <= 5:
                    print(f"DIFF {label} {mode}: {text!r}\n  sglang:  {theirs}\n  mockoss: {ours}")
    print(f"{total} parses compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
