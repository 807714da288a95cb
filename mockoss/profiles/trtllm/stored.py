"""trtllm-serve's ``GET`` and ``DELETE /v1/responses/{response_id}``, and what the ``trtllm`` profile
keeps for them while its response store is on (switch ``responses_store``, the server's default).

Sources (NVIDIA/TensorRT-LLM; read in the search tool's index, which stores the files' text at the
commits named, without line numbers: the functions are named instead):

* The routes came with NVIDIA/TensorRT-LLM#9937 ("Support GET/DELETE v1/responses/{response_id}",
  reviewed 2025-12-12; switch ``responses_retrieve``, off before it): before, ``register_routes``
  adds ``/v1/responses`` for ``POST`` only (NVIDIA/TensorRT-LLM@e7f7345e31e574b5d0918b756b871882c7346b3c:
  tensorrt_llm/serve/openai_server.py, the Harmony period's ``self.llm`` server), so both are
  FastAPI's 404 ``{"detail":"Not Found"}``. After (NVIDIA/TensorRT-LLM@00057725d9a6591f033e44f31c219e2426827bb7:
  tensorrt_llm/serve/openai_server.py, ``register_routes``), ``add_api_route('/v1/responses/{response_id}',
  …, methods=["GET"])`` and the same for ``["DELETE"]``: another method there (``HEAD``, ``POST``,
  ``PUT``…) is FastAPI's 405 ``{"detail":"Method Not Allowed"}``; a path with one more segment
  (``…/{id}/cancel``, ``…/input_items``) is its 404.
* ``openai_responses_get_response`` and ``openai_responses_delete_response`` (same file and commit),
  in this order: the store off (``self.enable_store`` false: ``TRTLLM_RESPONSES_API_DISABLE_STORE``
  set, or post-processing workers) is ``create_error_response("Response storage is disabled",
  err_type="InvalidRequestError")``, HTTP 400; an id not starting ``resp_`` is
  ``_create_invalid_response_id_error``: 400 ``Invalid 'response_id': '<id>'. Expected an ID that
  begins with 'resp'.``; an id the store does not hold is ``_create_response_id_not_found_error``: 404
  ``Response with id '<id>' not found.``, both ``InvalidRequestError``. Each body is
  ``ErrorResponse(object="error", message, type, param=None, code=<status>)`` (the profile's
  :meth:`~mockoss.profiles.trtllm.TrtllmProfile.error`). Found: ``GET`` returns
  ``JSONResponse(content=response.model_dump())`` of the stored ``ResponsesResponse``; ``DELETE``
  calls ``conversation_store.pop_response(response_id)`` and returns ``{"id": <id>, "object":
  "response", "deleted": true}``. The same handlers in the two other stored versions of the file
  that have the routes (whose commits the index does not name). The index stores text without
  line numbers, so functions are cited, not lines.
* What is stored (NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:tensorrt_llm/serve/responses_utils.py,
  the version :mod:`mockoss.profiles.trtllm.responses` follows): ``create_response`` stores the
  ``ResponsesResponse`` it returns ``if enable_store and request.store`` (``store`` defaults to
  true; ``null`` or false stores nothing); a stream calls the same ``create_response`` before its
  ``response.completed`` event, so a streamed response is retrieved in the non-streamed body's shape
  (``created_at`` an integer, TensorRT-LLM's field set), not the event's. A reply that failed (a
  Harmony parse error: the non-streamed 400, or the stream aborted) stored nothing.
* ``ConversationHistoryStore.pop_response(resp_id)`` (a stored ``responses_utils.py`` of the routes' period, commit not named,
  ``_pop_response``) removes the id from ``responses``; ``openai_responses`` loads a
  ``previous_response_id`` with ``load_response``, so a deleted id is no longer continued: 404
  ``Response with id '<id>' not found.`` (:func:`mockoss.profiles.trtllm.responses_input.responses_input_error`
  reads :func:`deleted`), and a second ``DELETE`` of it is that 404 too.

TensorRT-LLM's own test of the routes, ``tests/unittest/llmapi/apps/_test_openai_responses_entrypoint.py``
(NVIDIA/TensorRT-LLM@65b31db1b401d3752b8ebe7c29093cbfb6af04b7): retrieve equals the created response;
``invalid_response_id`` is ``BadRequestError``; ``resp_non_existent_response_id`` ``NotFoundError``;
after delete, retrieve is ``NotFoundError`` (converted in ``tests/e2e/test_trtllm_responses_stored.py``).

Not reproduced: the store's capacity (``ConversationHistoryStore(resp_capacity=16)``: the 17th
stored response evicts the oldest, as for ``previous_response_id``); mockoss keeps by bytes, per
server (:class:`~mockoss.profiles.response_store.KeptResponses`, emptied on reset; an entry dropped
again when the scripted transport cuts the reply before its end, as a real disconnect stops the
stream before ``create_response`` stores). Entries start with :data:`MARK`, so that another
profile's entry under the same id is never read as trtllm's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.vllm.responses_retrieve import lax_bool
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["DELETED", "MARK", "deleted", "keep", "stored_route"]

#: The first bytes of an entry this module keeps; then the stored response's JSON.
MARK = b"trtllm-response\n"
#: What a deleted response's entry holds.
DELETED = b"trtllm-deleted\n"
_PREFIX = "/v1/responses/"


def keep(body: Any, response_id: str, response: bytes, kept: Any) -> None:
    """Keep ``response`` (the ``ResponsesResponse`` JSON of a request that succeeded, the
    non-streamed body's bytes) under ``response_id`` when trtllm-serve stores it: the request's ``store``
    true (its default; pydantic's lax bool). The caller checks the server's store
    (``profile.responses_store``). ``kept``: the server's kept responses, or ``None`` (nothing kept)."""
    if kept is None or not isinstance(body, Mapping) or lax_bool(body.get("store", True)) is not True:
        return
    kept.put(response_id, MARK + response)


def deleted(kept: Any, response_id: Any) -> bool:
    """Whether ``response_id`` names a response ``DELETE /v1/responses/{id}`` removed from this
    server's store (``kept``: its kept responses, or ``None``)."""
    return kept is not None and isinstance(response_id, str) and kept.get(response_id) == DELETED


def stored_route(profile: TrtllmProfile, method: str, path: str, query: str, kept: Any) -> Reply | None:
    """trtllm-serve's answer to ``GET``/``DELETE /v1/responses/{response_id}`` (another method
    there: FastAPI's 405), else ``None`` (not that path, or the release has no such route:
    the caller answers FastAPI's 404). ``query`` is not read (the handlers take none).

    Returns:
        400 ``Response storage is disabled`` (store off); 400 ``Invalid 'response_id': …`` (no
        ``resp_`` prefix); 404 ``Response with id '<id>' not found.`` (never stored, ``store:
        false``, deleted, or before a reset); else 200: the stored response (``GET``) or
        ``{"id","object":"response","deleted":true}`` (``DELETE``, which removes it). Errors are
        ``InvalidRequestError`` in :meth:`~mockoss.profiles.trtllm.TrtllmProfile.error`'s shape.
    """
    if not profile.responses_retrieve or not path.startswith(_PREFIX):
        return None
    response_id = path[len(_PREFIX) :]
    if not response_id or "/" in response_id:
        return None
    if method not in ("GET", "DELETE"):
        return profile.route_error(405, method, path)
    if not profile.responses_store:
        return profile.error(400, "Response storage is disabled", kind="InvalidRequestError")
    if not response_id.startswith("resp_"):
        message = f"Invalid 'response_id': '{response_id}'. Expected an ID that begins with 'resp'."
        return profile.error(400, message, kind="InvalidRequestError")
    entry = kept.get(response_id) if kept is not None else None
    if entry is None or not entry.startswith(MARK):
        return profile.error(404, f"Response with id '{response_id}' not found.", kind="InvalidRequestError")
    if method == "DELETE":
        kept.put(response_id, DELETED)
        return Reply(status=200, body=dumps({"id": response_id, "object": "response", "deleted": True}).encode())
    return Reply(status=200, body=entry[len(MARK) :])
