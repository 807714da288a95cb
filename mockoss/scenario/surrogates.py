"""Refuse lone UTF-16 surrogates (U+D800-U+DFFF) in scenario text, at load time.

YAML's ``\\uXXXX`` escape gives any 16-bit code point: PyYAML, whose parse mockoss follows
(:mod:`mockoss.scenario.yamlsafe`; libyaml refuses such an escape and PyYAML then parses the text:
yaml/pyyaml@6.0.2 ``lib/yaml/scanner.py`` ``scan_flow_scalar_non_spaces`` appends ``chr(code)``
unchecked), reads ``raw: "\\ud800"`` as a one-character string that no UTF-8 can hold. Such a
file passed ``mockoss validate``; served, the character became U+FFFD (vLLM's ``content``
``"\\ufffd<|endoftext|>"``) or a 500 (gptoss-reference's non-streamed reply): t18 breaker report,
finding 11. A JSON file read as YAML meets it too: JSON writes a character outside the Basic
Multilingual Plane as a surrogate pair (``"\\ud83d\\ude00"``, Python's ``json.dumps`` by
default), which JSON joins into one character (RFC 8259 section 7) and YAML reads as two lone
halves; the error names that case and the spellings that work.

A file's text decoded from UTF-8 holds no surrogate of its own, so a file is walked only when
its text has a surrogate's escape (:func:`may_hold_surrogates`, the loader's gate); data given
inline (``mockoss.use({...})``, builders) is walked whole (a few microseconds for a test's
scenario; ~0.1 s for 20,000 steps).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from mockoss.scenario.compiled import ScenarioError
from mockoss.scenario.locate import loc_text, where

__all__ = [
    "RECORDING_PREFIX",
    "find_surrogate",
    "join_pairs",
    "may_hold_surrogates",
    "refuse_surrogates",
    "surrogate_problem",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
#: A YAML escape of a surrogate: ``\uD800``-``\uDFFF`` or ``\U0000D800``-``\U0000DFFF`` (an
#: escaped backslash before it matches too: the walk then finds nothing).
_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


#: How a recording's first line starts (:data:`mockoss.upstream.replay_command.COMMAND_PREFIX`,
#: not imported: the scenario layer does not import the upstream one; a test checks they agree).
RECORDING_PREFIX = "# Replay it byte for byte with: "


def may_hold_surrogates(text: str) -> bool:
    """Whether YAML ``text`` has an escape that can make a surrogate (the loader's gate before
    :func:`find_surrogate`; a text without ``\\u`` or ``\\U`` costs one substring search).

    ``False`` for a recording (``--record``, a cassette: its first line starts with
    :data:`RECORDING_PREFIX`): it holds what was exchanged, and a client may send a lone surrogate
    (JSON allows ``"\\ud800"``), which reaches the notes, ``match`` patterns and, echoed, the
    completion; its replay answers as the recorded server did
    (``tests/upstream/test_record_surrogates.py``). A surrogate written by hand is the mistake."""
    if text.startswith(RECORDING_PREFIX):
        return False
    return ("\\u" in text or "\\U" in text) and _ESCAPE.search(text) is not None


def find_surrogate(data: Any) -> tuple[tuple[int | str, ...], str] | None:
    """The first string (value or mapping key, in document order) holding a surrogate, with its
    path (``("steps", 0, "completion", "raw")``; a key's path ends with the key); else ``None``.
    Containers met twice (YAML aliases) are walked once."""
    if not _holds(data):
        return None
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), data)]
    seen: set[int] = set()
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return loc, value
        elif isinstance(value, (Mapping, list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            children = list(value.items()) if isinstance(value, Mapping) else list(enumerate(value))
            for key, child in reversed(children):
                stack.append(((*loc, key), child))
                if isinstance(key, str) and isinstance(value, Mapping) and _SURROGATE.search(key):
                    stack.append(((*loc, key), key))
    return None


def _holds(data: Any) -> bool:
    """Whether any string in ``data`` (values and keys) holds a surrogate: :func:`find_surrogate`'s
    walk without the paths (ASCII strings, most of a scenario, skip the search)."""
    stack, seen = [data], set()
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            if not value.isascii() and _SURROGATE.search(value):
                return True
        elif kind is dict or kind is list or kind is tuple or isinstance(value, (str, Mapping, list, tuple)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, str):  # a str subclass
                stack.append(str(value))
            elif isinstance(value, Mapping):
                stack.extend(value.keys())
                stack.extend(value.values())
            else:
                stack.extend(value)
    return False


def surrogate_problem(text: str) -> str:
    """The error's words for ``text``, which holds a surrogate: which one, and what to write instead."""
    if pair := _PAIR.search(text):
        high, low = (ord(c) for c in pair.group())
        joined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        return (
            f"a UTF-16 surrogate pair \\u{high:04x}\\u{low:04x} (JSON's escape for U+{joined:04X}), which YAML "
            f"reads as two lone halves that UTF-8 cannot encode: write the character itself or \\U{joined:08X}"
        )
    code = ord(_SURROGATE.search(text).group())  # type: ignore[union-attr]
    return (
        f"a lone UTF-16 surrogate U+{code:04X} (\\u{code:04x}), which UTF-8 cannot encode (the "
        "server would send U+FFFD or fail): write the character itself, or \\UXXXXXXXX for one outside the BMP"
    )


def _joined(text: str) -> str:
    """``text`` with each surrogate pair joined into its character (lone halves kept)."""
    return _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def join_pairs(data: Any) -> None:
    """Join, in place, each UTF-16 surrogate pair of the strings (values and keys) in ``data``
    (parsed YAML: dicts and lists) into the character it encodes, as JSON reads it (RFC 8259
    section 7): a JSON scenario file written by ``json.dumps`` (which escapes a character outside
    the Basic Multilingual Plane as a pair, ``"\\ud83d\\ude00"``) and read as YAML, whose
    PyYAML escape gives two lone halves, means that character. Lone halves are left for
    :func:`refuse_surrogates`."""
    stack, seen = [data], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            if any(isinstance(key, str) and _PAIR.search(key) for key in value):
                items = [(_joined(k) if isinstance(k, str) else k, v) for k, v in value.items()]
                value.clear()
                value.update(items)
            for key, child in value.items():
                if isinstance(child, str):
                    if not child.isascii() and _PAIR.search(child):
                        value[key] = _joined(child)
                else:
                    stack.append(child)
        elif isinstance(value, list):
            for index, child in enumerate(value):
                if isinstance(child, str):
                    if not child.isascii() and _PAIR.search(child):
                        value[index] = _joined(child)
                else:
                    stack.append(child)


def refuse_surrogates(data: Any, origin: str, root: yaml.Node | None) -> None:
    """Check scenario ``data`` (parsed from ``origin``, whose YAML tree is ``root``; ``None`` for
    data given inline) for strings holding a surrogate. Parsed from a file (``root`` given), its
    surrogate pairs are joined first (:func:`join_pairs`): only lone halves are refused.

    Raises:
        ScenarioError: ``FILE:LINE: FIELD: …`` for the first one (:func:`surrogate_problem`).
    """
    if root is not None:
        join_pairs(data)
    found = find_surrogate(data)
    if found is not None:
        loc, text = found
        raise ScenarioError(f"{where(origin, root, loc)}: {loc_text(loc)}: {surrogate_problem(text)}")
