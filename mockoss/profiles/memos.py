"""Where a profile keeps what it builds once per completion (issue 9: move work out of the request).

* :func:`template_memo`: the completion's memo when replies made from it can be templates
  (:func:`~mockoss.profiles.replay.templatable`), else ``None`` (each reply built directly).
* :func:`held`: an entry built once per *objects* (a plan, a classification) that themselves live
  in the completion's memo and are not hashable cheaply (or at all: dataclasses holding lists).
  The key holds the objects' ``id()``; the entry holds the objects themselves, so no other object
  can take one of those ids while the entry lives, and once the memo drops the entry its key goes
  with it. A found entry is still checked to hold the very objects asked for, so the memo's
  eviction rules are not what keeps a stale entry from answering.

LM Studio and llama.cpp wrote this lookup five times (``duplicates``); a stale hit through a reused
``id()`` was ruled out each time by the same two lines, now here once.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockoss.profiles.replay import templatable

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["held", "template_memo"]

T = TypeVar("T")


def template_memo(completion: Completion) -> MutableMapping[object, Any] | None:
    """Where a reply template built from ``completion`` is kept: ``completion._memo``, or ``None``
    (built per request) when its text rules out templates."""
    return completion._memo if templatable(completion.text) else None


def held(
    memo: MutableMapping[object, Any] | None,
    key: tuple[object, ...],
    objects: tuple[object, ...],
    build: Callable[[], T],
) -> T:
    """``build()`` memoised in ``memo`` per ``key`` and the identity of each of ``objects``
    (see the module docstring); with ``memo`` ``None``, built every time."""
    if memo is None:
        return build()
    full = key + tuple(map(id, objects))
    entry = memo.get(full)
    if entry is not None:
        for kept, wanted in zip(entry[0], objects):  # a loop, not all(): ~0.5 us a call less
            if kept is not wanted:
                break
        else:
            return entry[1]  # type: ignore[no-any-return]
    value = build()
    memo[full] = (objects, value)
    return value
