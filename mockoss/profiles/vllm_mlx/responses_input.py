"""vllm-mlx's refusal of a ``previous_response_id`` its response store does not hold.

Source: waybarrios/vllm-mlx@v0.6.0:vllm_mlx/server.py (the wheel; 0.4.0, 0.4.1 and 0.5.0, every
release on the profile's timeline, have the same lines).
``_responses_store`` is a module-level ``OrderedDict`` (at most ``_RESPONSES_STORE_MAX_SIZE``
entries) that every Responses reply is put into when ``request.store`` (the default, true);
``_responses_input_to_chat_messages``, run by ``_responses_request_to_chat_request`` after its
``text.format`` ``json_object`` check, prepends a stored response's messages and answers an id it
does not hold with ``HTTPException(status_code=404, detail=f"Previous response
`{request.previous_response_id}` not found")``: FastAPI's ``{"detail": "…"}`` body. mockoss knows which
ids it stored through the scenario player (:func:`mockoss.profiles.response_store.previous_stored`).

A ``function_call_output`` becomes a ``tool`` message whatever its ``call_id``
(``"tool_call_id": item.get("call_id", "")``); what the model's chat template then does with it is
not emulated (the profile renders its own prompt), so it is not refused here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.response_store import previous_stored

if TYPE_CHECKING:
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["previous_response_error"]


def previous_response_error(profile: VllmMlxProfile, body: Mapping[str, Any]) -> Reply | None:
    """404 ``{"detail": "Previous response `<id>` not found"}`` when ``body`` names a truthy
    ``previous_response_id`` this server did not store (never given, given to a ``store: false``
    request, or before a reset), else ``None``."""
    previous = body.get("previous_response_id")
    if not previous or previous_stored(previous):
        return None
    return profile.error(404, f"Previous response `{previous}` not found")
