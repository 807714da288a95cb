"""LM Studio's refusal of a ``previous_response_id`` it does not hold (``POST /v1/responses``).

LM Studio keeps responses: its Responses endpoint is stateful ("Use the id from a previous response
as previous_response_id", lmstudio-ai/docs ``1_developer/3_openai-compat/responses.md``; the
request's ``store`` defaults to true, as the server log of lmstudio-bug-tracker#1188 shows
``store=true``). A response id is a node of its prediction history: the server strips ``resp_``
(``toPredictionHistoryNodeId: resp_df16… -> df16…``, the same log) and answers an id it has no node
for with HTTP 400, the body pretty-printed by Express::

    {"error": {"message": "Prediction history node with id '<node>' not found while attempting to
    build chat history chain that includes this node.", "type": "invalid_request_error",
    "param": "previous_response_id", "code": "previous_response_not_found"}}

(a recorded reply of LM Studio on ``localhost:1234`` for ``previous_response_id:
"not_a_stored_reply"``: status 400, ``X-Powered-By: Express``, Content-Length 287, this body; the
same body, for ``'x'``, in a client's test "probed 2026-07-06"). mockoss knows which ids it gave and
stored through the scenario player (:func:`mockoss.profiles.response_store.previous_stored`, as the
``vllm`` profile's ``responses_store`` switch): an id it gave to a request that did not say
``store: false`` continues the conversation; any other id is refused.

Not reproduced: the ``resp_`` prefix being stripped in the message is read from the log line above
(the recorded ids had no prefix); LM Studio 0.3.31's failure to find the ids of *streamed*
responses (lmstudio-bug-tracker#1188, closed as fixed): every stored id is found here. A
``function_call_output`` whose call is not in the input is answered as before (LM Studio's handling
of it is not public).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.response_store import previous_stored

if TYPE_CHECKING:
    from mockoss.profiles.lmstudio import LmstudioProfile

__all__ = ["previous_response_error"]


def previous_response_error(profile: LmstudioProfile, body: Mapping[str, Any]) -> Reply | None:
    """LM Studio's 400 for a ``previous_response_id`` naming no response this server stored (never
    given, given to a ``store: false`` request, or before a reset), else ``None``.

    The body is :meth:`LmstudioProfile.error`'s shape (pretty-printed with ``pretty_json``) with
    ``param: "previous_response_id"`` and ``code: "previous_response_not_found"``; the message names
    the id without its ``resp_`` prefix."""
    previous = body.get("previous_response_id")
    if previous is None or previous_stored(previous):
        return None
    node = previous.removeprefix("resp_") if isinstance(previous, str) else previous
    message = f"Prediction history node with id '{node}' not found while attempting to build chat history chain that includes this node."
    error = {
        "message": message,
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }
    return Reply(status=400, body=profile._body({"error": error}))
