"""LM Studio's native REST API v1 model listing: ``GET /api/v1/models`` (LM Studio ≥ 0.4.0).

Source: lmstudio-ai/docs ``1_developer/2_rest/list.md`` (fields and order) and the API changelog
("LM Studio 0.4.0: LM Studio native v1 REST API"). Clients probe it to recognise LM Studio
(hermes-agent's server-type waterfall starts with it). The values for gpt-oss-20b
(``display_name``, ``size_bytes``, ``params_string``, ``capabilities``) are plausible constants,
not measured (unverified). Before 0.4.0 (switch ``rest_api_v1=false``) the route is unknown and
gets LM Studio's ``Unexpected endpoint or method`` reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, ServerInfo

if TYPE_CHECKING:
    from mockoss.profiles.lmstudio import LmstudioProfile

__all__ = ["side_route"]


def _model(profile: LmstudioProfile, name: str) -> dict[str, Any]:
    publisher = name.split("/", 1)[0] if "/" in name else "lmstudio-community"
    return {
        "type": "llm",
        "publisher": publisher,
        "key": name,
        "display_name": "gpt-oss 20B",
        "architecture": "gpt-oss",
        "quantization": {"name": "MXFP4", "bits_per_weight": 4},
        "size_bytes": 12109566560,
        "params_string": "20B",
        "loaded_instances": [{"id": name, "config": {"context_length": profile.max_context_length}}],
        "max_context_length": profile.max_context_length,
        "format": "gguf",
        "capabilities": {"vision": False, "trained_for_tool_use": True},
        "description": None,
    }


def side_route(profile: LmstudioProfile, method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
    """``GET /api/v1/models`` when ``rest_api_v1`` is on, else ``None``."""
    if method == "GET" and path == "/api/v1/models" and profile.rest_api_v1:
        return Reply(status=200, body=profile._body({"models": [_model(profile, n) for n in info.served_model_names]}))
    return None
