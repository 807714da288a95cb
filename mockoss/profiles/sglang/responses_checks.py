"""The requests SGLang 0.5.23's ``/v1/responses`` refuses for gpt-oss before generating.

Read from, and checked by running (``tools/sglang_serving_diff.py``),
``python/sglang/srt/entrypoints/openai/serving_responses.py`` (``create_responses``,
``_make_request_with_harmony``, ``_construct_input_messages_with_harmony``),
``entrypoints/harmony_utils.py`` (``parse_response_input``) and ``protocol.py``
(``ResponsesRequest``, ``ResponseTool``, ``effective_tool_choice``). Each check returns what the
reply needs; :mod:`.responses` writes it in the nested error shape.
"""

from __future__ import annotations

from typing import Any

from mockoss.profiles.base import ResponsesRequestView

__all__ = ["invalid", "named_choice", "reject"]

#: protocol.py ``RESPONSE_TOOL_TYPES``.
_TOOL_TYPES = frozenset({"function", "web_search", "web_search_preview", "code_interpreter", "file_search", "image_generation",
                         "computer_use_preview", "local_shell", "shell", "mcp", "custom", "namespace", "tool_search"})


def invalid(request: ResponsesRequestView) -> str | None:
    """What SGLang's ``ResponsesRequest`` model refuses and mockoss's schema lets through (a tool
    type outside ``RESPONSE_TOOL_TYPES``, a function tool with no name): the 400 of the validation
    handler (``type: "Bad Request"``; the wording here is mockoss's, SGLang's is pydantic's)."""
    for index, tool in enumerate(request.body.get("tools") or ()):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind not in _TOOL_TYPES:
            return f"Invalid request: tools.{index}.type: {kind!r} is not one of SGLang's tool types"
        if kind == "function" and not tool.get("name"):
            return f"Invalid request: tools.{index}: Value error, Function tools must include a name."
    return None


def reject(request: ResponsesRequestView) -> tuple[int, str, str | None] | None:
    """``(status, message, param)`` of the checks ``create_responses`` makes before generating, in
    its order, else ``None`` (the model check is the server's, see ``model_check``)."""
    body = request.body
    types = [t.type for t in request.tools]
    if "shell" in types:
        return 400, "Shell tools are not supported by this model", "tools"
    if body.get("previous_response_id") is not None or body.get("background"):
        param = "previous_response_id" if body.get("previous_response_id") is not None else "background"
        return 400, ("Response store is disabled. Stateful Responses require --enable-response-store on a standalone server; "
                     "response storage is unavailable in PD mode."), param
    choice = request.tool_choice
    if choice == "required" and not any(t in ("function", "custom") for t in types):
        return 400, ('tool_choice="required" requires at least one tool with type="function" or type="custom"; '
                     "other built-in tool types cannot be forced."), None
    named = named_choice(choice)
    if named is not None and not any(t.type in ("function", "custom") and t.name == named for t in request.tools):
        return 400, f"Tool {named!r} is not declared in tools", "tool_choice"
    include = body.get("include") or ()
    if "message.output_text.logprobs" in include:
        return 400, "logprobs are not supported with gpt-oss models", "logprobs"
    text_format = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(text_format, dict) and text_format.get("type") == "json_schema":
        return 400, "structured output (text.format) is not supported with gpt-oss models", "text"
    if any(t in ("web_search", "web_search_preview") for t in types):
        return 400, ("web_search requires a browser backend. Set EXA_API_KEY on the SGLang server to enable native Exa-backed web "
                     "search, or configure a browser MCP tool server. Create an Exa API key at https://dashboard.exa.ai/api-keys."), None
    if choice != "auto":  # _make_request_with_harmony
        need = ("restrict the recipient to the named tool" if isinstance(choice, dict) else
                "require a tool recipient" if choice == "required" else "exclude tool recipients")
        # A ValueError in the prompt step is reported as f"{e} {e.__cause__}": hence " None".
        return 400, (f"Harmony tool_choice={choice!r} cannot {need}: recipient-header decoding constraints are not "
                     "implemented; use tool_choice='auto'. None"), None
    missing = _unanswered_output(body.get("input"))
    if missing is not None:  # parse_response_input: a tool output needs its call earlier in the input
        return 400, f"No call message found for {missing} None", None
    return None


def _unanswered_output(items: Any) -> str | None:
    """The ``call_id`` of the first ``function_call_output`` (or custom tool output) whose call is
    not an earlier input item (``_construct_input_messages_with_harmony`` keeps only those; the
    store of earlier responses is off), else ``None``."""
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        # The id as text: a list or object call_id is unhashable (a TypeError 500 before, breaker D4).
        call_id = str(item.get("call_id"))
        if kind in ("function_call", "custom_tool_call"):
            calls.add(call_id)
        elif kind in ("function_call_output", "custom_tool_call_output") and call_id not in calls:
            return call_id
    return None


def named_choice(choice: Any) -> str | None:
    """``effective_tool_choice``'s named function or custom tool, else ``None``."""
    if not isinstance(choice, dict):
        return None
    function = choice.get("function")
    # A "function" that is not an object names nothing (a fuzzed body got an unscripted 500 here).
    name = choice.get("name") or (function.get("name") if isinstance(function, dict) else None)
    return name if choice.get("type") in ("function", "custom") and name else None
