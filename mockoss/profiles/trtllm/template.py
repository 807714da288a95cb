"""Reply templates: what a trtllm reply holds that depends only on the completion and the request's
shape, built once and memoised on ``Completion._memo``; a request fills in its ids, ``created``,
``model`` and usage.

A template is built by the same code that writes a reply, given :class:`SlotIds` for the id source
and :func:`slot` strings for the other per-request values. ``dumps`` writes a slot as
``\\u0000name\\u0000``, which :func:`split` cuts the text at: an id's slot (a number) wherever it
is (an id may be part of a string: ``"call_" + id``), a named slot with the quotes around it (it
stands for a whole JSON value). No scripted text
can forge a slot: a completion whose text holds a NUL character is never templated
(:func:`templatable`), and request fields never go into a template. Memo keys hold the effective
``max_tokens`` (:meth:`Completion.cap <mockoss.harmony.Completion.cap>`), so requests with distinct
limits that do not cut the answer share one template (issue 9: a repeated long request costs its
ids, not its plan).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.base import IdSource

__all__ = ["SlotIds", "fill", "new_id", "profile_key", "slot", "split", "templatable"]

#: A slot as ``dumps`` writes it: a named one is a whole JSON string, an id's may be part of one.
_SLOT = re.compile(r'"\\u0000([a-z]\w*)\\u0000"|\\u0000(\d+)\\u0000')


def slot(name: str) -> str:
    """The string that stands for the per-request value ``name`` while a template is built."""
    return f"\x00{name}\x00"


class SlotIds:
    """Stands in for :class:`~mockoss.profiles.base.IdSource` while a template is built: the
    ``n``-th id asked for is the slot ``str(n)``; ``order`` lists ``(prefix, width)`` per id, in
    the order the request's own id source must then be asked (its ids depend on the position)."""

    __slots__ = ("order",)

    def __init__(self) -> None:
        self.order: list[tuple[str, int | None]] = []

    def next(self, prefix: str = "", width: int | None = None) -> str:
        self.order.append((prefix, width))
        return slot(str(len(self.order) - 1))

    def ids(self, source: IdSource) -> list[str]:
        """The request's ids, in ``order``: prefix and hex digits, cut to ``width`` characters."""
        return [source.next(prefix)[:width] for prefix, width in self.order]

    def values(self, source: IdSource) -> dict[str, str]:
        """The request's ids by slot name, for :func:`fill`."""
        return {str(i): item_id for i, item_id in enumerate(self.ids(source))}


def new_id(ids: IdSource | SlotIds, prefix: str, width: int | None = None) -> str:
    """``ids.next(prefix)`` cut to ``width`` characters (a slot while a template is built)."""
    if isinstance(ids, SlotIds):
        return ids.next(prefix, width)
    return ids.next(prefix)[:width]


@functools.lru_cache(maxsize=64)
def profile_key(profile: Any) -> str:
    """The profile as a memo key: its ``repr`` (every switch, in field order), one string whose
    bytes a memo store counts at once (the dataclass is walked field by field)."""
    return repr(profile)


def templatable(completion: Completion) -> bool:
    """Whether ``completion``'s replies may be templated: its text holds no NUL character, so no
    text the completion puts in a reply reads as a slot."""
    return "\x00" not in completion.text


def split(text: str) -> tuple[str, ...]:
    """``text`` cut at its slots: text, slot name, text, …, text (odd positions are names: an id's
    position as digits, or a named slot)."""
    if "\\u0000" not in text:  # most chunks (a substring search instead of the pattern)
        return (text,)
    parts = _SLOT.split(text)  # text, named or None, id or None, text, …
    pieces = [parts[0]]
    for at in range(1, len(parts), 3):
        pieces += (parts[at] or parts[at + 1], parts[at + 2])
    return tuple(pieces)


def fill(pieces: tuple[str, ...], values: dict[str, str]) -> str:
    """The text of ``pieces`` (from :func:`split`) with each slot replaced by ``values[name]``,
    written as is: an id's characters (its quotes are the template's), a named slot's JSON text."""
    if len(pieces) == 1:
        return pieces[0]
    return "".join([values[piece] if i % 2 else piece for i, piece in enumerate(pieces)])
