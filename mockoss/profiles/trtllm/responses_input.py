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
  the previous response's output and the ``function_call`` items before it in ``input``
  (``construct_harmony_messages``), else ``ValueError(f"No call message found for {call_id}")``,
  which the route's ``except Exception`` answers ``create_error_response(str(e))``: HTTP 400,
  ``BadRequestError``.

mockoss knows which ids it stored through the scenario player
(:func:`mockoss.profiles.response_store.previous_stored`). It does not keep a stored response's
output, so a continued request's outputs are not checked. Not reproduced: the store's capacity
(``ConversationHistoryStore(resp_capacity=16)``: the 17th stored response evicts the oldest).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.orphan_output import first_orphan_output
from mockoss.profiles.response_store import previous_stored

if TYPE_CHECKING:
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["responses_input_error"]


def responses_input_error(profile: TrtllmProfile, body: Mapping[str, Any], *, store: bool = True) -> Reply | None:
    """trtllm-serve's refusal of ``body``'s conversation, in its order, else ``None``; to be called
    after the ``resp_`` prefix check.

    Args:
        profile: the profile whose :meth:`~mockoss.profiles.trtllm.TrtllmProfile.error` writes the body.
        body: the request body.
        store: the server's response store (on unless ``TRTLLM_RESPONSES_API_DISABLE_STORE`` is set).

    Returns:
        404 ``Response with id '<id>' not found.`` (``InvalidRequestError``) for a
        ``previous_response_id`` this server did not store (store on); else 400 ``No call message
        found for <call_id>`` (``BadRequestError``) for the first ``function_call_output`` with no
        ``function_call`` of its ``call_id`` before it (not checked for a continued request); else
        ``None``.
    """
    previous = body.get("previous_response_id")
    if store and previous is not None:
        if previous_stored(previous):
            return None
        return profile.error(404, f"Response with id '{previous}' not found.", kind="InvalidRequestError")
    call_id = first_orphan_output(body.get("input"))
    if call_id is not None:
        return profile.error(400, f"No call message found for {call_id}")
    return None
