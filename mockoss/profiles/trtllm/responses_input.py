"""trtllm-serve's refusals of a Responses conversation: a ``previous_response_id`` its store does
not hold, and a ``function_call_output`` whose call it cannot find.

Sources (NVIDIA/TensorRT-LLM, ``tensorrt_llm/serve``; the same lines in the stored versions of
``openai_server.py`` read for this, old and current):

* ``openai_server.py`` ``__init__``: ``self.enable_store = len(os.getenv(
  "TRTLLM_RESPONSES_API_DISABLE_STORE", "")) < 1`` (and, later, ``not
  self.postproc_worker_enabled``): the store is on by default. ``openai_responses``: with the store
  on, a ``previous_response_id`` not starting ``resp_`` is ``_create_invalid_response_id_error``
  (400, already in :func:`mockoss.profiles.trtllm.responses.surface_responses`), then one the store
  does not hold is ``_create_response_id_not_found_error``: HTTP 404, ``ErrorResponse(message=
  "Response with id '<id>' not found.", type="InvalidRequestError", code=404)``. With the store off
  the id is not looked at at all.
* ``responses_utils.py`` ``parse_response_input`` (NVIDIA/TensorRT-LLM@83ab45a5, the commit the
  profile's Responses module follows): a ``function_call_output`` looks for its ``call_id`` among
  the previous response's output and the calls before it in ``input``, else ``ValueError(f"No call
  message found for {call_id}")``, which the route's ``except Exception`` answers
  ``create_error_response(str(e))``: HTTP 400, ``BadRequestError``. ``construct_harmony_messages``
  adds an input item to those calls only ``if isinstance(input_msg, ResponseFunctionToolCall)``
  (the same line in every stored version of the file, 2025 to 2026), and ``ResponsesRequest.input``
  is ``list[Union[ResponseInputItemParam, ResponseReasoningItem, ResponseFunctionToolCall]]``
  (``openai_protocol.py``; later versions add ``dict[str, Any]`` last) with no validator that
  converts a ``function_call`` (vLLM added one for this, vllm-project/vllm#24158). pydantic's smart
  union validates a ``function_call`` object as the first member, the SDK's TypedDict
  ``ResponseFunctionToolCallParam`` (a plain dict, never found), unless the SDK model wins: when
  the object has a key the TypedDict does not declare (the model keeps extra keys, so more fields
  are set) or a ``null`` the TypedDict refuses (``id``, ``namespace``, ``status``). So a call
  written as ``{"type", "call_id", "name", "arguments"[, "id", "status"]}`` is not found: its output
  is this 400; a call re-sent as trtllm returned it (``"status": null``, what ``response.output``
  items hold and the openai SDK sends back) is found. Run here, not only read: the route's models
  and ``construct_harmony_messages`` copied from 83ab45a5 behind a fastapi 0.121.3 app (the pin of
  ``requirements.txt`` at NVIDIA/TensorRT-LLM@000867d9; ``openai`` unpinned, ``pydantic>=2.9.1``),
  sent the openai SDK's requests (``client.responses.create``) under pydantic 2.9.1, 2.11.7,
  2.12.5, 2.13.5, 2.14.4 and openai 1.99.9, 1.109.1, 2.8.0, 2.54.0, 3.57.0: this rule held in
  every pair; only the keys the TypedDict declares differ, and TensorRT-LLM leaves ``openai``
  unpinned, so which keys is the deployment's: switch ``openai_sdk_keys`` (:data:`SDK_KEYS`). Not reproduced: NVIDIA/TensorRT-LLM#19454
  (2026-09-20, after this timeline) drops every ``null`` before validation, so there a re-sent
  call is not found either.

mockoss knows which ids it stored through the scenario player
(:func:`mockoss.profiles.response_store.previous_stored`). It does not keep a stored response's
output, so a continued request's outputs are not checked. Not reproduced: the store's capacity
(``ConversationHistoryStore(resp_capacity=16)``: the 17th stored response evicts the oldest).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.orphan_output import first_orphan_output
from mockoss.profiles.response_store import previous_stored
from mockoss.profiles.trtllm.stored import deleted

if TYPE_CHECKING:
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["SDK_KEYS", "first_unfound_output", "responses_input_error"]

_BASE = ("type", "call_id", "name", "arguments", "id", "status")
#: Switch ``openai_sdk_keys`` → the keys the openai SDK's TypedDict ``ResponseFunctionToolCallParam``
#: declares (``openai/types/responses/response_function_tool_call_param.py``), and those of them it
#: refuses as ``null`` where the SDK model ``ResponseFunctionToolCall`` takes ``None`` (so a ``null``
#: there makes the model win). Read in the wheels: ``openai-2.24``: openai 2.20.0 and 2.24.0;
#: ``openai-2.40``: 2.26.0, 2.28.0, 2.30.0, 2.40.0 (adds ``namespace``); ``openai-2.54``: 2.54.0
#: (adds ``caller``, ``Optional`` in both: ``null`` validates either way); ``openai-3.57``: 3.22.1
#: and 3.57.0 (adds ``async``, ``bool`` in the TypedDict, ``Optional[bool]`` in the model). The
#: releases between those read (2.25, 2.41-2.53, 2.55-3.22.0) are not known.
SDK_KEYS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "openai-2.24": (frozenset(_BASE), ("id", "status")),
    "openai-2.40": (frozenset({*_BASE, "namespace"}), ("id", "namespace", "status")),
    "openai-2.54": (frozenset({*_BASE, "namespace", "caller"}), ("id", "namespace", "status")),
    "openai-3.57": (frozenset({*_BASE, "namespace", "caller", "async"}), ("id", "namespace", "status", "async")),
}


def responses_input_error(profile: TrtllmProfile, body: Mapping[str, Any], *, store: bool = True, kept: Any = None) -> Reply | None:
    """trtllm-serve's refusal of ``body``'s conversation, in its order, else ``None``; to be called
    after the ``resp_`` prefix check.

    Args:
        profile: the profile whose :meth:`~mockoss.profiles.trtllm.TrtllmProfile.error` writes the body.
        body: the request body.
        store: the server's response store (on unless ``TRTLLM_RESPONSES_API_DISABLE_STORE`` is set).
        kept: the server's kept responses (``None``: none), read for an id ``DELETE
            /v1/responses/{id}`` removed (:func:`mockoss.profiles.trtllm.stored.deleted`:
            ``load_response`` no longer finds it).

    Returns:
        404 ``Response with id '<id>' not found.`` (``InvalidRequestError``) for a
        ``previous_response_id`` this server did not store, or deleted since (store on); else 400 ``No call message
        found for <call_id>`` (``BadRequestError``) for the first ``function_call_output`` with no
        ``function_call`` of its ``call_id`` before it (not checked for a continued request); else
        ``None``.
    """
    previous = body.get("previous_response_id")
    if store and previous is not None:
        if previous_stored(previous) and not deleted(kept, previous):
            return None
        return profile.error(404, f"Response with id '{previous}' not found.", kind="InvalidRequestError")
    call_id = first_unfound_output(body.get("input"), profile.openai_sdk_keys)
    if call_id is not None:
        return profile.error(400, f"No call message found for {call_id}")
    return None


def first_unfound_output(items: Any, sdk_keys: str = "openai-3.57") -> str | None:
    """The ``call_id`` of the first ``function_call_output`` item of ``items`` (a Responses
    ``input``; anything but a list holds none) that trtllm-serve finds no call for, else ``None``.

    A call is found when a ``function_call`` item of that ``call_id`` comes before the output and
    pydantic validates it as the SDK's ``ResponseFunctionToolCall`` (:func:`_validated_as_model`,
    see the module) under the openai SDK ``sdk_keys`` names (a key of :data:`SDK_KEYS`); a call
    without a ``null`` or an undeclared key stays a dict and is passed over, as
    ``construct_harmony_messages`` does. The search is
    :func:`mockoss.profiles.orphan_output.first_orphan_output`'s.

    Raises:
        KeyError: ``sdk_keys`` is not a key of :data:`SDK_KEYS` (the profile checks its switch).
    """
    declared, not_null = SDK_KEYS[sdk_keys]
    return first_orphan_output(items, is_call=partial(_validated_as_model, declared=declared, not_null=not_null))


def _validated_as_model(item: dict[str, Any], *, declared: frozenset[str], not_null: tuple[str, ...]) -> bool:
    """Whether pydantic's smart union picks ``ResponseFunctionToolCall`` over the TypedDict before
    it for this ``function_call`` object: a key the TypedDict does not declare (both validate; the
    model, ``extra="allow"``, sets more fields) or a ``null`` the TypedDict refuses."""
    return any(key not in declared for key in item) or any(key in item and item[key] is None for key in not_null)
