"""llama-server's conversion of a Responses request to a Chat Completions request, with its 400s.

llama-server keeps no responses and runs ``/v1/responses`` through its chat path: the handler
converts the body (``server_chat_convert_responses_to_chatcmpl``,
ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp), then parses the converted body with
``oaicompat_chat_params_parse`` as ``/v1/chat/completions`` does (``post_responses_oai`` in
``tools/server/server-context.cpp``, read in the copy vendored at
Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-context.cpp). So a Responses request
meets the converter's own refusals first (each an ``std::invalid_argument``: HTTP 400
``invalid_request_error``), then every chat check of :mod:`mockoss.profiles.llamacpp.refusals`
on the converted messages.

The converter, per :func:`to_chat_body`:

* ``input`` is required (``'input' is required``); a non-empty string ``previous_response_id`` is
  refused (``llama.cpp does not support 'previous_response_id'.``), so the calls a
  ``function_call_output`` answers must be in the same ``input``; ``input`` is a string (one user
  message) or an array (else ``'input' must be a string or array of objects``); ``instructions``
  becomes a leading system message.
* Each item is, in this order of tests: a message of role ``user``/``system``/``developer`` with a
  string or array ``content`` (parts ``input_text``, ``input_image`` -> ``image_url``, which a
  text-only server then refuses with a 500; ``input_file`` and other types are 400s); an
  ``assistant`` item of ``type: "message"`` (``output_text``/``input_text``/``refusal`` parts,
  merged into the assistant message before it); a ``function_call`` whose ``arguments``,
  ``call_id`` and ``name`` are strings (an assistant message's ``tool_calls``, merged likewise); a
  ``function_call_output`` with a string ``call_id`` and a string or ``input_text``-array
  ``output`` (a ``tool`` message); a ``reasoning`` item with a ``summary`` array, whose
  ``content[0].text`` (required: ``item['content'] is not an array`` is what a client that sends
  back only the summary meets) becomes the assistant message's ``reasoning_content``. Anything else
  is ``Cannot determine type of 'item'``: e.g. an assistant message without ``"type": "message"``,
  or a ``function_call`` whose ``arguments`` is an object.
* ``tools`` must be an array (``'tools' must be an array of objects``); tools other than
  ``function`` are dropped; ``max_output_tokens`` becomes ``max_tokens``, ``reasoning.effort``
  ``reasoning_effort``.

Not emulated: mockoss validates every Responses body with its shared request schema before the
profile sees it, so a body without ``input``, an ``input`` that is neither a string nor a list of
objects, or a ``tools`` that is not a list gets that schema's 400 in its words; :func:`to_chat_body`
still checks them for a direct caller. Fields of another type that llama-server reads as absent
(``instructions: 5``, ``tools: [5]``, ``reasoning: "high"``) are passed to the schema as absent
(:mod:`mockoss.profiles.llamacpp.lenient`), and read here as the converter reads them.

Every refusal of the chat template (:mod:`mockoss.profiles.llamacpp.template_checks`, HTTP 500)
then applies to the converted messages, e.g. a ``function_call_output`` with no ``function_call``
before it (``Message has tool role, but there was no previous assistant message with a tool
call!``), or a ``reasoning`` item whose text holds Harmony markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss.profiles.llamacpp.options import RequestError

__all__ = ["PREVIOUS_RESPONSE_REFUSAL", "to_chat_body"]

#: The converter's 400 to a non-empty ``previous_response_id``.
PREVIOUS_RESPONSE_REFUSAL = "llama.cpp does not support 'previous_response_id'."


def _is_str(item: Mapping[str, Any], key: str) -> bool:
    return isinstance(item.get(key), str)


def _part_type(part: Any) -> str:
    """``json_value(part, "type", std::string())``: the part's string ``type``, else ``""``."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    return kind if isinstance(kind, str) else ""


def _input_parts(content: list[Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = _part_type(part)
        if kind == "input_text":
            if "text" not in part:
                raise RequestError(400, "'Input text' requires 'text'")
            parts.append({"text": part["text"], "type": "text"})
        elif kind == "input_image":
            if "image_url" not in part:
                raise RequestError(400, "'image_url' is required")
            parts.append({"image_url": {"url": part["image_url"]}, "type": "image_url"})
        elif kind == "input_file":
            raise RequestError(400, "'input_file' is not supported by llamacpp at this moment")
        else:
            raise RequestError(400, "'type' must be one of 'input_text', 'input_image', or 'input_file'")
    return parts


def _output_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content, "type": "text"}]
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        kind = _part_type(part)
        if kind in ("output_text", "input_text"):
            if not _is_str(part, "text"):
                raise RequestError(400, "'Output text' requires 'text'")
            parts.append({"text": part["text"], "type": "text"})
        elif kind == "refusal":
            if not _is_str(part, "refusal"):
                raise RequestError(400, "'Refusal' requires 'refusal'")
            parts.append({"refusal": part["refusal"], "type": "refusal"})
        else:
            raise RequestError(400, "'type' must be one of 'output_text' or 'refusal'")
    return parts


def _tool_output(item: Mapping[str, Any]) -> dict[str, Any]:
    output = item["output"]
    if not isinstance(output, str):
        parts = []
        for part in output:
            if not isinstance(part, Mapping) or part.get("type") != "input_text":
                raise RequestError(400, "Output of tool call should be 'Input text'")
            parts.append({**part, "type": "text"})
        output = parts
    return {"content": output, "role": "tool", "tool_call_id": item["call_id"]}


def _append(messages: list[dict[str, Any]], item: Any) -> None:
    """One ``input`` item converted onto ``messages`` (merged into a trailing assistant message
    where the converter merges it), testing the converter's branches in its order."""
    if not isinstance(item, Mapping):
        raise RequestError(400, "Cannot determine type of 'item'")
    prev = messages[-1] if messages and messages[-1].get("role") == "assistant" else None
    role, kind, content = item.get("role"), item.get("type"), item.get("content")
    if type(content) is str:  # only an input message has string content: made an input_text part
        content = [{"text": content, "type": "input_text"}]
    if type(role) is str and type(content) is list and role in ("user", "system", "developer"):
        message = {key: value for key, value in item.items() if key not in ("type", "status", "content")}
        message["content"] = _input_parts(content)
        messages.append(message)
    elif role == "assistant" and kind == "message":
        parts = _output_parts(content)
        if prev is not None:
            prev["content"] = [*(prev["content"] if isinstance(prev.get("content"), list) else []), *parts]
        else:
            message = {key: value for key, value in item.items() if key not in ("type", "status", "content")}
            message["content"] = parts
            messages.append(message)
    elif kind == "function_call" and type(arguments := item.get("arguments")) is str and type(
        call_id := item.get("call_id")
    ) is str and type(name := item.get("name")) is str:
        call = {"function": {"arguments": arguments, "name": name}, "id": call_id, "type": "function"}
        if prev is not None:
            prev["tool_calls"] = [*(prev["tool_calls"] if isinstance(prev.get("tool_calls"), list) else []), call]
        else:
            messages.append({"role": "assistant", "tool_calls": [call]})
    elif kind == "function_call_output" and type(item.get("call_id")) is str and type(item.get("output")) in (str, list):
        messages.append(_tool_output(item))
    elif kind == "reasoning" and type(item.get("summary")) is list:
        if type(content) is not list:
            raise RequestError(400, "item['content'] is not an array")
        if not content:
            raise RequestError(400, "item['content'] is empty")
        if not (isinstance(content[0], Mapping) and type(content[0].get("text")) is str):
            raise RequestError(400, "item['content']['text'] is not a string")
        if prev is not None:
            prev["reasoning_content"] = content[0]["text"]
        else:
            messages.append({"role": "assistant", "content": [], "reasoning_content": content[0]["text"]})
    else:
        raise RequestError(400, "Cannot determine type of 'item'")


def to_chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions body ``server_chat_convert_responses_to_chatcmpl`` makes of a Responses
    ``body`` (a copy: ``input`` and ``instructions`` become ``messages``, ``tools`` chat tools,
    ``max_output_tokens`` ``max_tokens``, ``reasoning.effort`` ``reasoning_effort``; every other
    field is kept as it is), as the module docstring says.

    Raises:
        RequestError: the converter's refusal, HTTP 400, in its words.
    """
    if "input" not in body:
        raise RequestError(400, "'input' is required")
    if isinstance(body.get("previous_response_id"), str) and body["previous_response_id"]:
        raise RequestError(400, PREVIOUS_RESPONSE_REFUSAL)
    chat = {key: value for key, value in body.items() if key not in ("input", "instructions")}
    messages: list[dict[str, Any]] = []
    if "instructions" in body:
        instructions = body["instructions"]
        messages.append({"role": "system", "content": instructions if isinstance(instructions, str) else ""})
    request_input = body["input"]
    if isinstance(request_input, str):
        messages.append({"role": "user", "content": request_input})
    elif isinstance(request_input, list):
        for item in request_input:
            _append(messages, item)
    else:
        raise RequestError(400, "'input' must be a string or array of objects")
    chat["messages"] = messages
    if "tools" in body:
        tools = body["tools"]
        if not isinstance(tools, list):
            raise RequestError(400, "'tools' must be an array of objects")
        functions = [
            {"type": "function", "function": {"strict": True, **{k: v for k, v in tool.items() if k != "type"}}}
            for tool in tools
            if isinstance(tool, Mapping) and tool.get("type") == "function"
        ]
        del chat["tools"]
        if functions:
            chat["tools"] = functions
    if "max_output_tokens" in body:
        chat["max_tokens"] = chat.pop("max_output_tokens")
    if "reasoning" in body:
        reasoning = chat.pop("reasoning")
        if isinstance(reasoning, Mapping) and "effort" in reasoning:
            chat["reasoning_effort"] = reasoning["effort"]
    return chat
