"""The OpenAI API's refusals of a Responses request's conversation: a ``previous_response_id``
it does not hold, and a ``function_call_output`` with no call.

The OpenAI API stores every response unless the request says ``store: false``, so a
``previous_response_id`` naming a response this server gave (and stored) continues it, and any
other id is refused. mockoss knows which ids it gave through the scenario player
(:func:`mockoss.profiles.response_store.previous_stored`, the mechanism of the ``vllm`` profile's
``responses_store`` switch).

Sources (the API is closed; its error bodies as clients received them):

* unknown ``previous_response_id``: HTTP 400, ``{"error": {"message": "Previous response with id
  '<id>' not found.", "type": "invalid_request_error", "param": "previous_response_id", "code":
  "previous_response_not_found"}}`` (maximhq/bifrost#2441, the body relayed from the API; the same
  four fields in the WebSocket error event pinned by a Go SDK test, "Previous response with id
  'resp_abc' not found.", status 400, param ``previous_response_id``).
* orphaned ``function_call_output``: HTTP 400, ``{"error": {"message": "No tool call found for
  function call output with call_id <id>.", "type": "invalid_request_error", "param": "input",
  "code": null}}`` (continuedev/continue#10092, microsoft/vscode#320060, vercel/ai#8216).

Not known, and mockoss's choice: which check runs first (here the previous response, which the API
must load before it can match calls); whether a call *after* its output answers it (here only an
earlier ``function_call`` does, as in every open server); a continued request's outputs are not
checked (the calls may be in the stored response's output, which mockoss does not keep).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss.profiles.base import Reply
from mockoss.profiles.openai.stored import DELETED
from mockoss.profiles.openai.wire import error_reply
from mockoss.profiles.orphan_output import first_orphan_output
from mockoss.profiles.response_store import previous_stored

__all__ = ["responses_input_error"]


def responses_input_error(body: Mapping[str, Any], kept: Any = None) -> Reply | None:
    """The OpenAI API's refusal of ``body``'s conversation, else ``None``:

    1. ``previous_response_id`` set and not a response this server stored (never given, given to a
       ``store: false`` request, before a reset, or deleted since: ``kept``, the server's kept
       responses, holds :data:`~mockoss.profiles.openai.stored.DELETED` for it): 400 ``Previous response with id '<id>' not
       found.``, param ``previous_response_id``, code ``previous_response_not_found``;
    2. without ``previous_response_id``, the first ``function_call_output`` item whose ``call_id``
       no earlier ``function_call`` item has: 400 ``No tool call found for function call output
       with call_id <id>.``, param ``input``, code null.
    """
    previous = body.get("previous_response_id")
    if previous is not None:
        if previous_stored(previous) and not (kept is not None and isinstance(previous, str) and kept.get(previous) == DELETED):
            return None
        return error_reply(
            400,
            f"Previous response with id '{previous}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    call_id = first_orphan_output(body.get("input"))
    if call_id is not None:
        return error_reply(400, f"No tool call found for function call output with call_id {call_id}.", param="input")
    return None
