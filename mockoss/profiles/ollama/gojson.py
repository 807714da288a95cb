"""Go's ``encoding/json`` output as Ollama's server writes it, byte for byte.

Ollama is a Go program, so its bodies differ from Python's ``json`` in ways a client can see:
``<``, ``>``, ``&``, U+2028 and U+2029 are escaped (``\\u003c``…), floats are written without a
trailing ``.0`` (``1``, ``0.5``, ``1e-7``, ``1e+21``), and map keys are sorted.

* :func:`quote`, :func:`format_float`, :func:`dumps`: ``json.Marshal`` (Go ≥ 1.22, which writes
  ``\\b`` and ``\\f`` as short escapes).
* :func:`go_any`: a Python JSON value as Go holds it after ``json.Unmarshal`` into ``any`` (every
  number a ``float64``, object keys sorted, lone surrogates replaced by U+FFFD).

Decoding lives in :mod:`~mockoss.profiles.ollama.goscan` (the scanner's error messages) and
:mod:`~mockoss.profiles.ollama.arguments` (tool-call arguments). Source read, not copied: Go's
``encoding/json/encode.go``; outputs were checked against a Go program (see
tests/profiles/test_ollama_gojson.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from mockoss.profiles.wire import finite, rebuild

__all__ = ["Raw", "dumps", "format_float", "go_any", "quote"]


class Raw(str):
    """A JSON fragment :func:`dumps` writes verbatim (Go's ``json.RawMessage`` / a ``Marshaler``)."""

    __slots__ = ()


# --------------------------------------------------------------------------- encoding

_NEEDS_GO_ESCAPE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _go_escape(match: re.Match[str]) -> str:
    return _GO_ESCAPES.get(match.group(), "\ufffd")


def quote(text: str) -> str:
    """``text`` as Go's ``json.Marshal`` writes a string (HTML-safe escaping on, the default).

    Python's ``json.dumps(ensure_ascii=False)`` already matches Go for quotes, backslashes and
    control characters (``\\b \\f \\n \\r \\t`` short, others ``\\u00XX`` lowercase); on top of it
    ``< > &`` become ``\\u003c \\u003e \\u0026``, U+2028/U+2029 are escaped, and lone surrogates
    (invalid UTF-8 to Go) become U+FFFD.
    """
    encoded = json.dumps(text, ensure_ascii=False)
    if _NEEDS_GO_ESCAPE.search(encoded) is None:
        return encoded
    return _NEEDS_GO_ESCAPE.sub(_go_escape, encoded)


def format_float(value: float) -> str:
    """A ``float64`` as ``json.Marshal`` writes it: ``1``, ``0.5``, ``-0``, ``1e-7``, ``1e+21``.

    Shortest round-trip digits (as ``repr``); positional between 1e-6 and 1e21, else exponent form
    with at least two exponent digits, ``e-07`` shortened to ``e-7``.

    Raises:
        ValueError: NaN or ±Inf (Go's ``UnsupportedValueError``).
    """
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {value!r}")
    text = repr(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = repr(value).partition("e")
        power = int(exponent)
        digits = f"{abs(power):02d}" if power >= 0 or abs(power) >= 10 else str(abs(power))
        return f"{mantissa}e{'-' if power < 0 else '+'}{digits}"
    positional = format(Decimal(text), "f")
    if "." in positional:
        positional = positional.rstrip("0").rstrip(".")
    return positional


def dumps(value: Any) -> str:
    """``json.Marshal`` of ``value``: dicts keep their order (sort a Go map's keys before calling),
    lists and tuples are arrays, :class:`Raw` is written as is, ``int`` as an integer, ``float``
    per :func:`format_float`. At any depth (Go nests up to 10,000 levels, deeper than Python's
    parser reads): a value too deep for the recursive encoder is written by :func:`_dumps_deep`.

    Raises:
        TypeError: a value JSON cannot hold.
    """
    try:
        return _dumps(value)
    except RecursionError:
        return _dumps_deep(finite(value))
    except ValueError as exc:
        # NaN/inf: Ollama's decoder refuses them in the fields it reads (mockoss.server.nonfinite);
        # one left in data mockoss echoes beyond those is written null, never a 500 (breaker D5).
        cleaned = finite(value) if str(exc).startswith("json: unsupported value") else value
        if cleaned is value:
            raise
        return dumps(cleaned)


def _dumps(value: Any) -> str:
    """:func:`dumps`, recursively (the fast path)."""
    if isinstance(value, str):
        return value if isinstance(value, Raw) else quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(quote(k) + ":" + _dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


class _Text(str):
    """Output text on :func:`_dumps_deep`'s stack (not a value)."""

    __slots__ = ()


def _dumps_deep(value: Any) -> str:
    """:func:`_dumps` with an explicit stack instead of recursion: the same text at any depth."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            out.append(item)
        elif isinstance(item, Mapping):
            pairs = list(item.items())
            out.append("{")
            stack.append(_Text("}"))
            for i in range(len(pairs) - 1, -1, -1):
                key, element = pairs[i]
                stack.append(element)
                stack.append(_Text(("," if i else "") + quote(key) + ":"))
        elif isinstance(item, (list, tuple)):
            out.append("[")
            stack.append(_Text("]"))
            for i in range(len(item) - 1, -1, -1):
                stack.append(item[i])
                if i:
                    stack.append(_Text(","))
        else:
            out.append(_dumps(item))  # a leaf (or the TypeError _dumps raises)
    return "".join(out)


_SURROGATES = re.compile("[\ud800-\udfff]")


def go_any(value: Any) -> Any:
    """``value`` (parsed by Python's ``json``) as Go holds it after decoding into ``any``:
    numbers become ``float`` (``float64``), object keys are sorted (Go writes maps sorted), lone
    surrogates become U+FFFD. At any depth (:func:`_go_any_deep` past the recursion limit)."""
    try:
        return _go_any(value)
    except RecursionError:
        return _go_any_deep(value)


def _go_any(value: Any) -> Any:
    """:func:`go_any`, recursively (the fast path)."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, Mapping):
        items = {_go_any(k): _go_any(v) for k, v in value.items()}
        return {k: items[k] for k in sorted(items)}
    if isinstance(value, Sequence):
        return [_go_any(v) for v in value]
    return value


def _go_any_deep(value: Any) -> Any:
    """:func:`_go_any` with an explicit stack (:func:`~mockoss.profiles.wire.rebuild`): a mapping
    with its converted keys in sorted order, a later duplicate key's value winning, as the
    comprehension does; a ``str`` is a leaf, any other ``Sequence`` a list."""
    return rebuild(value, _go_any, mapping=Mapping, sequence=Sequence, entries=_go_entries)


def _go_entries(item: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """A mapping's items under their converted keys, sorted as :func:`_go_any` sorts them."""
    children = {}
    for key, element in item.items():
        children[_go_any(key)] = element
    return [(key, children[key]) for key in sorted(children)]
