"""Make a server's answer comparable with a golden: ids become their shape, timestamps ``<TIME>``.

Two answers to the same request from the same completion differ only in random ids and clocks.
:class:`Normaliser` replaces every id-like string with ``<PREFIX:SHAPE#N>``: the prefix it starts
with (one of :data:`ID_PREFIXES`, else empty), the shape of the rest (``hex16``, ``alnum24``, or
literal pieces joined by ``-``/``_`` such as ``tool-hex32``; see :func:`id_shape`) and ``N``, the
number of that distinct value among the values with the same prefix, in order of first appearance
within one exchange. So the shape of each id and which ids repeat (an ``item_id`` naming the item
announced three frames earlier) are compared; the random values are not. A wrong shape or a
broken reuse is a difference. Timestamps (``created``, ``created_at``, ``completed_at``) become
``<TIME>`` when they are numbers. Key order is kept: it is part of what a server sends.

Id-like strings are the values of :data:`ID_KEYS` (at any depth, so ``tool_calls[].id`` too) and
any other string that starts with a prefix of :data:`ID_PREFIXES`, has no space or other
character an id does not have, and has a random-looking piece after the prefix (so the item type
``mcp_call`` stays a word). Bodies compare as compact JSON (:func:`dumps`); SSE streams
compare frame by frame (:meth:`Normaliser.frame`), ``data: [DONE]`` kept.

The format is issue 8's (its notes describe it).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "ID_KEYS",
    "ID_PREFIXES",
    "TIME_KEYS",
    "Normaliser",
    "dumps",
    "id_shape",
    "normalise_body",
    "normalise_frames",
    "normalise_json",
    "split_sse",
]

#: Keys whose string values are ids, whatever they look like.
ID_KEYS = frozenset({"id", "item_id", "response_id", "call_id", "system_fingerprint"})
#: Prefixes of ids in vLLM's and OpenAI's shapes, longest first so ``chatcmpl-`` wins over ``cmpl-``.
ID_PREFIXES = ("chatcmpl-", "cmpl-", "resp_", "rs_", "msg_", "fc_", "call_", "mcp_", "ctc_", "vllm-")
#: Keys whose numeric values are clock readings.
TIME_KEYS = frozenset({"created", "created_at", "completed_at"})

_ID_CHARS = re.compile(r"[A-Za-z0-9_.\-]+")
_HEX = re.compile(r"[0-9a-f]+")
_ALNUM = re.compile(r"[A-Za-z0-9]+")
_PIECES = re.compile(r"([-_])")
_VERSION = re.compile(r"\d+(\.\d+)+")
#: A piece this long or longer is taken for random; shorter pieces (``tool``, ``0.32.0``) are kept.
_RANDOM_MIN = 6


def id_shape(rest: str) -> str:
    """The shape of an id's part after its prefix.

    Pieces between ``-`` and ``_`` of at least 6 characters become ``hexN`` (lowercase hex
    digits), ``alnumN`` (letters and digits) or ``charsN``; shorter pieces and version numbers
    (``0.32.0``) stay as they are.

    >>> id_shape("0123456789abcdef")
    'hex16'
    >>> id_shape("tool-9f8e7d6c5b4a39281716151413121110")
    'tool-hex32'
    >>> id_shape("0.32.0-Ab3dE9fGh1")
    '0.32.0-alnum10'
    """
    out = []
    for piece in _PIECES.split(rest):
        if piece in ("-", "_") or len(piece) < _RANDOM_MIN or _VERSION.fullmatch(piece):
            out.append(piece)
        elif _HEX.fullmatch(piece):
            out.append(f"hex{len(piece)}")
        elif _ALNUM.fullmatch(piece):
            out.append(f"alnum{len(piece)}")
        else:
            out.append(f"chars{len(piece)}")
    return "".join(out)


def _prefix_of(value: str) -> str | None:
    for prefix in ID_PREFIXES:
        if value.startswith(prefix):
            return prefix
    return None


class Normaliser:
    """Normalises the JSON values of one exchange, numbering ids across all of them.

    Use one instance per exchange: for a stream, pass every frame through the same instance so an
    id reused across frames gets the same number.
    """

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, int]] = {}

    def id(self, value: str, *, keyed: bool = True) -> str:
        """``<PREFIX:SHAPE#N>`` for an id; a string that is not id-like (``keyed=False``) is returned as is."""
        prefix = _prefix_of(value)
        if not _ID_CHARS.fullmatch(value) or (prefix is None and not keyed):
            return value
        prefix = prefix or ""
        shape = id_shape(value[len(prefix) :])
        if not keyed and shape == value[len(prefix) :]:
            return value  # nothing random after the prefix: a word such as "mcp_call", not an id
        numbers = self._seen.setdefault(prefix, {})
        number = numbers.setdefault(value, len(numbers) + 1)
        return f"<{prefix}:{shape}#{number}>"

    def json(self, value: Any, key: str | None = None) -> Any:
        """A normalised copy of a parsed JSON value (dict key order kept)."""
        if isinstance(value, dict):
            return {k: self.json(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, str):
            return self.id(value, keyed=key in ID_KEYS)
        if key in TIME_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            return "<TIME>"
        return value

    def frame(self, frame: str | bytes) -> str:
        """A normalised SSE frame: each ``data:`` line's JSON normalised and dumped compact.

        ``event:`` lines and ``data: [DONE]`` stay as they are; surrounding blank lines go, so
        ``"event: response.created\\ndata: {…}\\n\\n"`` becomes ``"event: response.created\\ndata: {…}"``.
        A ``data:`` line that is not JSON is kept verbatim.
        """
        text = frame.decode("utf-8") if isinstance(frame, bytes) else frame
        lines = []
        for line in text.strip("\r\n").splitlines():
            if line.startswith("data:"):
                payload = line[5:].strip()
                try:
                    parsed = json.loads(payload)
                except ValueError:
                    lines.append(line)
                    continue
                lines.append("data: " + dumps(self.json(parsed)))
            else:
                lines.append(line)
        return "\n".join(lines)


def normalise_json(value: Any) -> Any:
    """A normalised copy of one parsed JSON value, ids numbered within it alone."""
    return Normaliser().json(value)


def dumps(value: Any) -> str:
    """Compact JSON, as bodies compare: ``separators=(",", ":")``, ``ensure_ascii=False``."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def normalise_body(raw: bytes | str, normaliser: Normaliser | None = None) -> Any:
    """A response body, parsed and normalised; a body that is not JSON is returned as its text."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return (normaliser or Normaliser()).json(parsed)


def normalise_frames(frames: list[str] | list[bytes] | tuple[Any, ...]) -> list[str]:
    """Every frame of one stream, normalised with one :class:`Normaliser`; empty frames dropped."""
    normaliser = Normaliser()
    out = [normaliser.frame(f) for f in frames]
    return [f for f in out if f]


def split_sse(text: str | bytes) -> list[str]:
    """Split an SSE body into frames (separated by a blank line), CRLF or LF."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    text = text.replace("\r\n", "\n")
    return [frame for frame in text.split("\n\n") if frame.strip()]
