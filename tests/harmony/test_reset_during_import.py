"""``MockServer.reset`` clears the request-data caches of the modules imported so far; a module
another thread is importing at that moment is in ``sys.modules`` before its caches exist.

Reproducer (issue 9, eighth session's review, finding 4): ``reset()`` on a test thread while the
server's thread answered its first request, and so imported ``mockoss.schemas.chat``, raised
``AttributeError: partially initialized module 'mockoss.schemas.chat' has no attribute '_DECLS'``
(about half of the runs of the reviewer's script). Simulated here without threads: the module's
spec says it is initializing, as importlib's own does while the module's code runs.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

import pytest

from mockoss.harmony.prompt import caches


def _stub(name: str, initializing: bool) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__spec__._initializing = initializing
    return module


def test_a_module_being_imported_is_skipped(monkeypatch):
    name = caches._REQUEST_CACHES[0][0]
    monkeypatch.setitem(sys.modules, name, _stub(name, initializing=True))
    caches.clear_caches()  # raised AttributeError before


def test_a_wrong_path_in_a_module_imported_already_still_raises(monkeypatch):
    name = caches._REQUEST_CACHES[0][0]
    monkeypatch.setitem(sys.modules, name, _stub(name, initializing=False))
    with pytest.raises(AttributeError):
        caches.clear_caches()
