"""Tool-call arguments as Ollama decodes and re-encodes them.

Ollama's harmony parser unmarshals the text a model addressed to a tool into
``api.ToolCallFunctionArguments`` (an insertion-ordered map: ``ollama/ollama:api/types.go`` and
``internal/orderedmap/orderedmap.go@fb307609``, built on ``wk8/go-ordered-map/v2@v2.1.8``, which
reads objects with ``buger/jsonparser@v1.1.1`` and writes keys with
``mailru/easyjson/jwriter@v0.7.7``). Both what it accepts and how it writes the result back are
reproduced here; outputs were checked against a Go program built on those libraries (the cases
are in tests/profiles/test_ollama_gojson.py).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from mockoss.profiles.ollama.gojson import dumps
from mockoss.profiles.ollama.goscan import syntax_error

__all__ = ["BAD_KEY_ESCAPE", "NOT_AN_OBJECT", "Arguments", "parse_arguments"]

_SURROGATES = re.compile("[\ud800-\udfff]")

#: ``jsonparser.MalformedObjectError``: what ``ObjectEach`` returns for a top-level value that is
#: not an object (array, string, number, true, false).
NOT_AN_OBJECT = "Value looks like object, but can't find closing '}' symbol"
#: ``jsonparser.MalformedStringEscapeError``: a key whose ``\\u`` escapes are not valid UTF-16.
BAD_KEY_ESCAPE = "Encountered an invalid escape sequence in a string"


@dataclass(frozen=True, slots=True)
class Arguments:
    """Tool-call arguments after Ollama's ``json.Unmarshal`` → ``json.Marshal`` round trip.

    Attributes:
        json: the arguments as Ollama writes them (``{"location":"Paris"}``; ``null`` for a JSON
            ``null``), or ``None`` when decoding failed.
        error: Go's error text when decoding failed, e.g.
            ``invalid character 'l' looking for beginning of value``; else ``None``.
    """

    json: str | None
    error: str | None = None


class _Pairs(list):  # type: ignore[type-arg]
    """An object's ``(key, value)`` pairs in document order (arrays stay plain lists)."""

    __slots__ = ()


class _Overflow:
    """A number Go cannot hold in a ``float64`` (decoding it into ``any`` fails)."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _number(literal: str) -> float | _Overflow:
    value = float(literal)
    return _Overflow(literal) if math.isinf(value) else value


_DECODER = json.JSONDecoder(object_pairs_hook=_Pairs, parse_int=_number, parse_float=_number)


def _first_overflow(value: Any) -> _Overflow | None:
    if isinstance(value, _Overflow):
        return value
    if isinstance(value, list):
        for item in value:
            found = _first_overflow(item[1] if isinstance(value, _Pairs) else item)
            if found is not None:
                return found
    return None


def _object(pairs: _Pairs) -> dict[str, Any]:
    merged = {_SURROGATES.sub("\ufffd", k): _convert(v) for k, v in pairs}
    return {k: merged[k] for k in sorted(merged)}


def _convert(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, _Pairs):
        return _object(value)
    if isinstance(value, list):
        return [_convert(v) for v in value]
    return value


_EASY_SHORT = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"'}
_EASY_ESCAPE = re.compile('[\x00-\x1f"&<>\\\\\u2028\u2029]')


def _easy_key(key: str) -> str:
    """A key as easyjson's ``jwriter.String`` writes it (the ordered map's ``MarshalJSON``):
    ``\\t \\r \\n \\\\ \\"`` short, other control characters and ``< > &`` as ``\\u00XX``."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _EASY_SHORT.get(char) or f"\\u{ord(char):04x}"

    return '"' + _EASY_ESCAPE.sub(escape, key) + '"'


def parse_arguments(raw: str) -> Arguments:
    """Decode tool-call arguments the way Ollama does, and re-encode them as Ollama writes them.

    ``json.Unmarshal(raw, &api.ToolCallFunctionArguments)``: Go's scanner first validates the
    whole text (:func:`syntax_error`); a valid non-object top-level value fails in
    ``jsonparser.ObjectEach`` (:data:`NOT_AN_OBJECT`) except ``null``, which leaves the map unset
    (written ``null``); an object keeps its keys in first-seen order with the last duplicate's
    value, each value decoded into ``any`` (numbers ``float64``: an out-of-range number fails with
    ``json: cannot unmarshal number 1e400 into Go value of type float64``; nested objects become Go
    maps, written with sorted keys). Keys are written by easyjson (see :func:`_easy_key`).

    Returns:
        :class:`Arguments` with ``json`` or ``error`` set.
    """
    error = syntax_error(raw)
    if error is not None:
        return Arguments(None, error)
    try:
        parsed = _DECODER.decode(raw)
    except RecursionError:  # Go's limit is 10,000 levels; Python's recursion gives out first
        return Arguments(None, "mockoss: tool-call arguments nested too deeply to decode")
    if parsed is None:
        return Arguments("null")
    if not isinstance(parsed, _Pairs):
        return Arguments(None, NOT_AN_OBJECT)
    ordered: dict[str, Any] = {}
    for key, value in parsed:
        if _SURROGATES.search(key):
            return Arguments(None, BAD_KEY_ESCAPE)
        overflow = _first_overflow(value)
        if overflow is not None:
            return Arguments(None, f"json: cannot unmarshal number {overflow.literal} into Go value of type float64")
        ordered[key] = _convert(value)
    body = ",".join(_easy_key(k) + ":" + dumps(v) for k, v in ordered.items())
    return Arguments("{" + body + "}")
