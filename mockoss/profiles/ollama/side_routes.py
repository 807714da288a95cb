"""Ollama's ``GET /api/ps``: the models loaded in memory.

Source: ``server/routes.go`` ``PsHandler`` and ``api/types.go`` ``ProcessModelResponse``
(ollama/ollama@fb307609): ``{"models":[{"name","model","size","digest","details","expires_at",
"size_vram","context_length"}]}``, longest time remaining first. mockoss lists every served model
as loaded, as after a first request with the default ``keep_alive`` of 5 minutes: ``expires_at``
is the server's ``created`` time plus 5 minutes. ``size``, ``size_vram`` (fully on the GPU) and
``context_length`` are plausible constants for gpt-oss:20b, not measured (unverified).
"""

from __future__ import annotations

from mockoss.profiles.base import Reply, ServerInfo
from mockoss.profiles.ollama.errors import GO_JSON
from mockoss.profiles.ollama.gojson import dumps
from mockoss.profiles.ollama.identity import model_details, model_digest
from mockoss.profiles.ollama.timeline import rfc3339

__all__ = ["KEEP_ALIVE_S", "side_route"]

#: Ollama's default ``keep_alive`` (seconds).
KEEP_ALIVE_S = 300
_SIZE = 13793441244
_CONTEXT_LENGTH = 8192


def _ps(info: ServerInfo) -> Reply:
    expires = rfc3339((info.created + KEEP_ALIVE_S) * 1_000_000_000)
    models = [
        {
            "name": name,
            "model": name,
            "size": _SIZE,
            "digest": model_digest(name),
            "details": model_details(with_context=False),
            "expires_at": expires,
            "size_vram": _SIZE,
            "context_length": _CONTEXT_LENGTH,
        }
        for name in info.served_model_names
    ]
    return Reply(status=200, body=dumps({"models": models}).encode(), headers=GO_JSON)


def side_route(method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
    """``GET /api/ps``, else ``None``."""
    if method == "GET" and path == "/api/ps":
        return _ps(info)
    return None
