"""What the warm-up tests (``test_warmup.py``, ``test_warmup_check.py``) share: a watch on the
completions a server surfaces outside its lock, which are its warm-ups."""

from __future__ import annotations

from typing import Any


def watch_warm_ups(monkeypatch: Any, server: Any) -> list[Any]:
    """The completions ``surface`` is called for without the server lock (the warm-ups), filled
    in as they happen; the patch on the profile class is undone with ``monkeypatch``."""
    seen: list[Any] = []
    cls = type(server._base_profile)
    real = cls.surface

    def surface(self: Any, endpoint: str, completion: Any, request: Any, ctx: Any) -> Any:
        if not server._lock.locked():
            seen.append(completion)
        return real(self, endpoint, completion, request, ctx)

    monkeypatch.setattr(cls, "surface", surface)
    return seen
