"""Ollama's identity and health routes, and its route errors.

``GET``/``HEAD /`` (``Ollama is running``), ``/api/version``, ``/api/tags``, ``POST /api/show``,
``GET /v1/models`` and ``/v1/models/{model}`` (``ollama/ollama:server/routes.go``
``GenerateRoutes``, ``ListHandler``, ``ShowHandler``; ``openai/openai.go`` ``ToListCompletion``,
``ToModel`` at ``fb307609``). The model facts are those of the library's ``gpt-oss:20b`` (family
``gptoss``, MXFP4, 20.9B parameters, 128K context); size and digest are illustrative (the digest is
the SHA-256 of the name). Every served name is listed as a local model modified at the server's
``created`` time.

Unknown paths get gin's ``404 page not found``; a path Ollama routes for other methods gets
``405 method not allowed`` with ``Allow`` (gin's ``HandleMethodNotAllowed``). Ollama routes that
mockoss does not emulate (pull, push, create, embed, ps…) answer ``405`` for a wrong method and
``404`` otherwise.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from mockoss.profiles.base import Reply, ServerInfo
from mockoss.profiles.ollama.errors import GO_JSON, native_error, openai_error, plain
from mockoss.profiles.ollama.gojson import dumps
from mockoss.profiles.ollama.timeline import rfc3339

if TYPE_CHECKING:
    from mockoss.profiles.ollama import OllamaProfile

__all__ = ["ROUTES", "model_details", "model_digest", "probe", "route_error"]

#: Ollama's routes and their methods, in gin's method-tree order (HEAD, GET, POST, DELETE: the
#: order each method was first registered), which is the order of an ``Allow`` header.
ROUTES: dict[str, tuple[str, ...]] = {
    "/": ("HEAD", "GET"),
    "/api/version": ("HEAD", "GET"),
    "/api/status": ("GET",),
    "/api/pull": ("POST",),
    "/api/push": ("POST",),
    "/api/tags": ("HEAD", "GET"),
    "/api/show": ("POST",),
    "/api/delete": ("DELETE",),
    "/api/me": ("POST",),
    "/api/signout": ("POST",),
    "/api/create": ("POST",),
    "/api/copy": ("POST",),
    "/api/experimental/web_search": ("POST",),
    "/api/experimental/web_fetch": ("POST",),
    "/api/experimental/model-recommendations": ("GET",),
    "/api/ps": ("GET",),
    "/api/generate": ("POST",),
    "/api/chat": ("POST",),
    "/api/embed": ("POST",),
    "/api/embeddings": ("POST",),
    "/v1/chat/completions": ("POST",),
    "/v1/completions": ("POST",),
    "/v1/embeddings": ("POST",),
    "/v1/models": ("GET",),
    "/v1/responses": ("POST",),
    "/v1/audio/transcriptions": ("POST",),
    "/v1/messages": ("POST",),
}
_PARAM_ROUTES = {"/v1/models/": ("GET",), "/api/blobs/": ("HEAD", "POST"), "/api/user/keys/": ("DELETE",)}

_CAPABILITIES = ["completion", "tools", "thinking"]


def _methods(path: str) -> tuple[str, ...]:
    if path in ROUTES:
        return ROUTES[path]
    for prefix, methods in _PARAM_ROUTES.items():
        rest = path[len(prefix) :]
        if path.startswith(prefix) and rest and "/" not in rest:
            return methods
    return ()


def route_error(status: int, method: str, path: str) -> Reply:
    """gin's ``404 page not found`` / ``405 method not allowed`` (``Allow``: the path's other methods)."""
    allowed = [m for m in _methods(path) if m != method]
    if status == 405 or allowed:
        return plain(405, "405 method not allowed", allow=", ".join(allowed))
    return plain(404, "404 page not found")


def model_details(*, with_context: bool) -> dict[str, object]:
    """The ``details`` object of a served model (gpt-oss:20b's values), as ``/api/tags``,
    ``/api/show`` and ``/api/ps`` carry it; ``with_context`` adds ``context_length``."""
    details: dict[str, object] = {
        "parent_model": "",
        "format": "gguf",
        "family": "gptoss",
        "families": ["gptoss"],
        "parameter_size": "20.9B",
        "quantization_level": "MXFP4",
    }
    if with_context:
        details["context_length"] = 131072
    return details


def model_digest(name: str) -> str:
    """The ``digest`` reported for model ``name``: SHA-256 of the name, 64 hex digits (a stand-in
    with the shape of the manifest digest Ollama reports)."""
    return hashlib.sha256(name.encode()).hexdigest()


def _namespace(name: str) -> str:
    """``model.ParseName(name).Namespace``: ``library`` unless the name says otherwise."""
    parts = name.split(":", 1)[0].split("/")
    return parts[-2] if len(parts) >= 2 else "library"


def display_shortest(name: str) -> str:
    """``DisplayShortest``: ``gpt-oss`` → ``gpt-oss:latest``; a tag already given is kept."""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def _tags(info: ServerInfo) -> Reply:
    modified = rfc3339(info.created * 1_000_000_000)
    models = [
        {
            "name": name,
            "model": name,
            "modified_at": modified,
            "size": 13793441244,
            "digest": model_digest(name),
            "details": model_details(with_context=True),
            "capabilities": _CAPABILITIES,
        }
        for name in info.served_model_names
    ]
    return Reply(status=200, body=dumps({"models": models}).encode(), headers=GO_JSON)


def _show(info: ServerInfo) -> Reply:
    """``ShowResponse`` of the served model. The request body is not seen here (probes get none),
    so any ``{"model": …}`` is answered as if it named a served model."""
    body = {
        "parameters": "temperature                    1",
        "details": model_details(with_context=False),
        "model_info": {
            "general.architecture": "gptoss",
            "general.basename": "gpt-oss",
            "general.parameter_count": 20914757184,
            "gptoss.context_length": 131072,
            "gptoss.embedding_length": 2880,
        },
        "capabilities": _CAPABILITIES,
        "modified_at": rfc3339(info.created * 1_000_000_000),
    }
    return Reply(status=200, body=dumps(body).encode(), headers=GO_JSON)


def _model(name: str, info: ServerInfo) -> dict[str, object]:
    return {"id": name, "object": "model", "created": info.created, "owned_by": _namespace(name)}


def probe(profile: OllamaProfile, method: str, path: str, info: ServerInfo) -> Reply | None:
    """Answer an identity route, a wrong method on a known route (405), else ``None``."""
    if method in ("GET", "HEAD"):
        if path == "/":
            return plain(200, "Ollama is running", content_type="text/plain; charset=utf-8")
        if path == "/api/version":
            return Reply(status=200, body=dumps({"version": profile.version}).encode(), headers=GO_JSON)
        if path == "/api/tags":
            return _tags(info)
    if method == "POST" and path == "/api/show":
        return _show(info)
    if method == "GET" and path == "/v1/models":
        listing = {"object": "list", "data": [_model(n, info) for n in info.served_model_names]}
        return Reply(status=200, body=(dumps(listing) + "\n").encode())
    if method == "GET" and path.startswith("/v1/models/") and _methods(path):
        name = path[len("/v1/models/") :]
        if name not in info.served_model_names:
            return openai_error(404, f"model '{display_shortest(name)}' not found")
        return Reply(status=200, body=(dumps(_model(name, info)) + "\n").encode())
    methods = _methods(path)
    if methods and method not in methods:
        return route_error(405, method, path)
    return None


def model_not_found(model: str, *, openai: bool) -> Reply:
    """``model 'X' not found`` (HTTP 404), native or OpenAI-shaped."""
    message = f"model '{model}' not found"
    return openai_error(404, message) if openai else native_error(404, message)
