"""A package's names imported on first use: one module ``__getattr__`` (PEP 562) for every package.

``mockoss.upstream`` (``Recorder``), ``mockoss.eval`` (its sender and report) and
``mockoss.harmony.library`` (the 0.0.8 header parser) each name things whose modules cost start-up
time that most runs never need (issue 9: ``mockoss serve``'s cold start; ``Recorder`` alone pulled
in the scrubber, redactor, journal and replay writer, ~5 ms). Each had its own ``__getattr__``;
:func:`module_getattr` is the one they share.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["module_getattr"]


def module_getattr(namespace: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module whose ``globals()`` is ``namespace``: ``name`` in
    ``homes`` is imported from the module ``homes[name]`` (a dotted module name) on first access and
    stored in ``namespace``, so later look-ups find it without this function.

    Raises (from the returned function):
        AttributeError: ``name`` is not in ``homes`` (the message Python gives for a missing
            module attribute).
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(home), name)
        return value

    return __getattr__
