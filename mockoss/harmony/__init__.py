"""The Harmony layer: offline encoding, scripted completions and parser traces. No HTTP here."""

from mockoss.harmony.completion import Completion, Emission
from mockoss.harmony.encoding import VocabularyError, load_encoding
from mockoss.harmony.trace import ParserTrace, TokenStep, parse_tokens

__all__ = ["Completion", "Emission", "ParserTrace", "TokenStep", "VocabularyError", "load_encoding", "parse_tokens"]
