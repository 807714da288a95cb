"""A read-only name → object mapping that imports each object's module on first use.

The profile registry and the timelines list every shipped server by name, but a served mockoss
uses one profile: importing all of them cost ``mockoss serve`` about 30 ms of CPU and several MB
of memory at start (issue 9, ``benchmarks/bench_start.py``). Names, order, ``in`` and ``len``
need no import; looking a name up imports its module once.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

__all__ = ["LazyMapping"]

V = TypeVar("V")


class LazyMapping(Mapping[str, V]):
    """Read-only mapping whose values are named by ``"module:attribute"`` and loaded on first use.

    ``where`` maps each name to ``"package.module:attribute"`` or to the value itself. The
    attribute found is used as follows: a class is instantiated with no arguments (a profile), a
    mapping is indexed by the name (several names from one table, e.g. the dated vLLM profiles),
    anything else is the value (a timeline). The first value stored for a name is the one returned
    afterwards, from any thread; no lock is held while a module is imported (the import system
    serialises imports, and a module that looks a name up while it loads cannot deadlock).

    Raises:
        KeyError: on lookup of a name not in ``where`` (as a dict does).
        ImportError, AttributeError: the spec names a module or attribute that does not exist.
    """

    __slots__ = ("_built", "_where")

    def __init__(self, where: Mapping[str, str | V]) -> None:
        self._where: dict[str, str | V] = dict(where)
        self._built: dict[str, V] = {}

    def __getitem__(self, name: str) -> V:
        try:
            return self._built[name]
        except KeyError:
            pass
        where = self._where[name]
        if isinstance(where, str):
            module, _, attribute = where.partition(":")
            found: Any = getattr(importlib.import_module(module), attribute)
            if isinstance(found, type):
                found = found()
            elif isinstance(found, Mapping):
                found = found[name]
            where = found
        return self._built.setdefault(name, where)  # two threads racing: both get the first one

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def loaded(self) -> list[str]:
        """The names built so far."""
        return list(self._built)

    def module_of(self, name: str) -> str | None:
        """The module ``name``'s value is imported from (``None`` for a value given directly).

        Raises:
            KeyError: ``name`` is not in the mapping.
        """
        where = self._where[name]
        return where.partition(":")[0] if isinstance(where, str) else None

    def __repr__(self) -> str:
        return f"LazyMapping({list(self._where)!r})"
