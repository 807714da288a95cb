"""``POST /v1/responses`` as SGLang serves gpt-oss (sgl-project/sglang@v0.5.23), non-streamed.

SGLang's Responses path for gpt-oss (``hf_config.model_type == "gpt_oss"``) does not use its string
Harmony parser (:mod:`.harmony_text`): it renders the prompt and parses the output with
openai-harmony (``entrypoints/harmony_utils.py``, ``entrypoints/context.py``), and maps messages to
output items itself. Read from, and checked against by running (``tools/sglang_serving_diff.py``),
``python/sglang/srt/entrypoints/openai/serving_responses.py`` (``create_responses``,
``responses_full_generator``, ``_make_response_output_items_with_harmony``),
``entrypoints/harmony_utils.py`` (``parse_output_message``, ``parse_remaining_state``),
``entrypoints/context.py`` (``HarmonyContext``) and ``protocol.py`` (``ResponsesResponse``):

* Every output token (the stop token included) goes through ``StreamableParser.process``; a
  ``HarmonyError`` is not caught, so the reply is the 400 ``{"error":{...,"type":
  "invalid_request_error"}}`` with the parser's message. There is no ``process_eos``: an open
  message is read from the parser's current state (``parse_remaining_state``).
* Items: ``analysis`` → ``reasoning`` (``rs_``), ``commentary`` to ``functions.X`` →
  ``function_call`` (``id`` ``ft_`` and ``call_id`` ``call_`` share one uuid), ``final`` (or
  ``commentary`` with no recipient) → ``message`` with ``phase`` ``final_answer`` (``commentary``),
  any other recipient or channel → 400 ``Unknown recipient: X`` / ``Unknown channel: X``. Calls are
  not checked against the declared tools. A call to ``browser.*``/``python`` makes SGLang run the
  built-in tool, which it has no session for: 400 with ``str(KeyError)`` (``'browser'``).
* Usage: ``input_tokens`` is always 0 (``HarmonyContext`` waits for a ``prompt_token_ids`` key the
  engine never sends), ``output_tokens`` the completion's tokens, ``reasoning_tokens`` 0.
* ``status``: ``incomplete`` with ``incomplete_details: {"reason":"max_output_tokens"}`` after a
  length stop. ``text`` is the request's, else ``{"format":{"type":"text"}}`` when every item is a
  message, else null; ``tools`` echoes the request's tools as SGLang's ``ResponseTool`` dumps them.
* A request without ``model`` fails: ``ResponsesResponse`` wants a string, so 400 with pydantic's
  message (a stream drops before its first event). A ``request_id`` in the body is the response id.
* Rejected before generating (``create_responses``): an unknown ``model`` (404), ``tool_choice``
  other than ``"auto"`` (400, "recipient-header decoding constraints are not implemented"),
  ``required`` with no function tool, a named choice of an undeclared tool, ``text.format``
  ``json_schema``, ``include`` of output logprobs, ``web_search`` tools (no browser backend), a
  ``shell`` tool, ``previous_response_id`` or ``background`` (the response store is off by default),
  a ``function_call_output`` whose call is not earlier in ``input`` (``No call message found for
  call_x None``).
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import RequestContext, ResponsesRequestView
from mockoss.profiles.sglang.responses_checks import named_choice
from mockoss.profiles.web_search import web_search_item
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from openai_harmony import Message

    from mockoss.harmony import ParserTrace

__all__ = ["ItemError", "OpenMessage", "error_body", "items_for", "response_object"]

_ECHOABLE_EFFORTS = frozenset({"minimal", "low", "medium", "high"})
#: ``ResponsesResponse(model=None)`` fails pydantic's ``str`` check when a request has no ``model``
#: (``model_name = request.model``); the text of pydantic 2.14's error, as SGLang returns it.
NO_MODEL = ("1 validation error for ResponsesResponse\nmodel\n  Input should be a valid string [type=string_type, input_value=None, "
            "input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.14/v/string_type")
_TOOL_FIELDS = ("type", "name", "description", "parameters", "strict", "tools", "defer_loading", "format")


#: http_server.py ``v1_responses_request`` wraps a stream with these headers.
_STREAM_HEADERS = (("cache-control", "no-cache"), ("connection", "keep-alive"))


class ItemError(Exception):
    """What ``parse_output_message`` or the built-in tool step raises (``str`` is the message)."""


def error_body(message: str, kind: str = "invalid_request_error", status: int = 400, param: str | None = None) -> bytes:
    """``create_error_response`` of ``OpenAIServingResponses``: the nested OpenAI shape."""
    return dumps({"error": {"message": message, "type": kind, "param": param, "code": status}}).encode()


@dataclass(frozen=True, slots=True)
class OpenMessage:
    """The parser's open message at the end (``parse_remaining_state`` reads it)."""

    channel: str | None
    recipient: str | None
    content: str


def _text(message: Message) -> list[str]:
    return [getattr(part, "text", "") for part in message.content]


def items_for(role: str, channel: str | None, recipient: str | None, texts: list[str], ids: Any, *, done: bool = True) -> list[dict[str, Any]]:
    """``parse_output_message`` (``done``) or ``parse_remaining_state`` (not ``done``: one text,
    ``in_progress`` calls, ``[]`` where it has no branch) for one message, as dumped items.

    Raises:
        ItemError: ``Unknown recipient: X`` / ``Unknown channel: X`` (``done`` only).
    """
    if role != "assistant":
        return []
    if recipient is not None and recipient.startswith("browser."):
        return [_web_search(recipient, texts, ids)] if done else []
    if recipient is not None and recipient.startswith("python"):
        code = "".join(texts)
        status = "completed" if done else "in_progress"
        return [{"id": ids.next("ci_"), "code": code, "container_id": "auto", "outputs": [], "status": status, "type": "code_interpreter_call"}]
    if channel == "analysis":
        return [reasoning_item(ids.next("rs_"), text, None) for text in texts]
    # parse_output_message maps a functions.* call on commentary only; the open-state reader on any channel.
    if recipient is not None and recipient.startswith("functions.") and (channel == "commentary" or not done):
        out = []
        for text in texts:
            suffix = ids.next()
            out.append({"arguments": text, "call_id": f"call_{suffix}", "name": recipient.removeprefix("functions."),
                        "type": "function_call", "id": f"ft_{suffix}", "status": None if done else "in_progress"})
        return out
    if channel == "commentary" and recipient is not None:
        if done:
            raise ItemError(f"Unknown recipient: {recipient}")
        return []
    if channel == "final" or (channel == "commentary" and recipient is None):
        phase = "final_answer" if channel == "final" else "commentary"
        parts = [{"annotations": [], "text": text, "type": "output_text", "logprobs": None} for text in texts]
        return [{"id": ids.next("msg_"), "content": parts, "role": "assistant", "status": "completed", "type": "message", "phase": phase}]
    if done:
        raise ItemError(f"Unknown channel: {channel}")
    return []


def _web_search(recipient: str, texts: list[str], ids: Any) -> dict[str, Any]:
    """``parse_output_message``'s ``web_search_call`` (:mod:`mockoss.profiles.web_search`)."""
    return web_search_item(recipient, texts, ids, ItemError)


def harmony_error_text(message: str) -> str:
    """``str(HarmonyError)`` as openai-harmony 0.0.4 (SGLang 0.5.23's pin) words it: the leftover
    header is a list of its whitespace-separated words (``["to=functions.x"]``), not oss-harmony's
    ``Some("to=functions.x")``; each word keeps the escapes Rust's ``{:?}`` gave its characters."""
    prefix = "unexpected tokens remaining in message header: Some(\""
    if not (message.startswith(prefix) and message.endswith("\")")):
        return message
    words: list[str] = []
    word = ""
    for char, shown in _rust_chars(message[len(prefix):-2]):
        if char.isspace():
            if word:
                words.append(word)
            word = ""
        else:
            word += shown
    if word:
        words.append(word)
    return message[: len(prefix) - 6] + "[" + ", ".join(f'"{w}"' for w in words) + "]"


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def _rust_chars(shown: str) -> list[tuple[str, str]]:
    """``(character, how Rust's {:?} showed it)`` for each character of a debug-printed string."""
    out: list[tuple[str, str]] = []
    index = 0
    while index < len(shown):
        if shown[index] != "\\" or index + 1 == len(shown):
            out.append((shown[index], shown[index]))
            index += 1
        elif shown[index + 1] == "u" and shown.startswith("{", index + 2) and "}" in shown[index:]:
            end = shown.index("}", index)
            out.append((chr(int(shown[index + 3 : end], 16)), shown[index : end + 1]))
            index = end + 1
        else:
            out.append((_ESCAPES.get(shown[index + 1], shown[index + 1]), shown[index : index + 2]))
            index += 2
    return out


def reasoning_item(item_id: str, text: str, status: str | None, summary: bool = False, encrypt: bool = False) -> dict[str, Any]:
    """A dumped ``ResponseReasoningItem``. As ``_make_reasoning_item`` builds it (the stream's
    items), ``summary`` mirrors the text when the request set ``reasoning.summary`` and
    ``encrypted_content`` packs it when ``include`` asks for ``reasoning.encrypted_content``
    (``responses_adapters.encode_reasoning_state``: a prefix and zlib + urlsafe base64, no key)."""
    parts = [{"text": text, "type": "summary_text"}] if summary else []
    blob = "sglang-reasoning-v1." + base64.urlsafe_b64encode(zlib.compress(text.encode())).decode("ascii") if encrypt else None
    return {"id": item_id, "summary": parts, "type": "reasoning", "content": [{"text": text, "type": "reasoning_text"}], "encrypted_content": blob, "status": status}


def content_deltas(trace: ParserTrace) -> list[str]:
    """The text each step adds to the open message's content as openai-harmony 0.0.4 shows it in
    ``current_content``: a token that ends inside a UTF-8 character adds nothing, and the text of
    the held tokens (their whole text, not only a valid prefix, unlike oss-harmony's deltas) comes
    with the token that completes the character (seen by running SGLang's stream on CJK text)."""
    encoding = load_encoding()
    out: list[str] = []
    held: list[int] = []
    for step in trace.steps:
        if step.completed is not None or step.delta is None:
            held = []
            out.append(step.delta or "")
            continue
        if held or "\ufffd" in encoding.decode([step.token]):
            held.append(step.token)
            try:
                text = encoding.decode_utf8(held)
            except Exception:  # noqa: BLE001 - the library's error for bytes that are not UTF-8 yet
                out.append("")
                continue
            held = []
            out.append(text)
            continue
        out.append(step.delta)
    return out


def open_message(trace: ParserTrace) -> OpenMessage | None:
    """The message still open after the last token, from the trace's steps, else ``None``."""
    content: list[str] = []
    last = None
    for step, delta in zip(trace.steps, content_deltas(trace), strict=True):
        if step.completed is not None:
            content, last = [], None
            continue
        last = step
        content.append(delta)
    if last is None or not "".join(content):
        return None
    return OpenMessage(last.channel, last.recipient, "".join(content))


def role_of(message: Message) -> str:
    """The message author's role as text (openai-harmony's ``Role`` enum or a plain string)."""
    role = message.author.role
    return str(getattr(role, "value", role))


def builtin_call(trace: ParserTrace) -> str | None:
    """``str(KeyError)`` when the last completed message calls a built-in tool
    (``need_builtin_tool_call``): SGLang has no session for it."""
    if not trace.messages:
        return None
    recipient = trace.messages[-1].recipient
    if recipient is not None and recipient.startswith("browser."):
        return "'browser'"
    if recipient is not None and recipient.startswith("python"):
        return "'python'"
    return None


def final_items(trace: ParserTrace, ids: Any) -> list[dict[str, Any]]:
    """``_make_response_output_items_with_harmony``: completed messages, then the open one.

    Raises:
        ItemError: see :func:`items_for`.
    """
    items: list[dict[str, Any]] = []
    for message in trace.messages:
        items += items_for(role_of(message), message.channel, message.recipient, _text(message), ids)
    remaining = open_message(trace)
    if remaining is not None:
        items += items_for("assistant", remaining.channel, remaining.recipient, [remaining.content], ids, done=False)
    return items


def _echo_tool(tool: Any) -> dict[str, Any]:
    """SGLang's ``ResponseTool`` dumped: its fields with defaults, then the extra keys sent."""
    data = dict(tool) if isinstance(tool, dict) else {}
    out = {"type": data.get("type"), "name": None, "description": None, "parameters": None, "strict": False,
           "tools": None, "defer_loading": None, "format": None}
    for key, value in data.items():
        out[key] = value
    return {k: out[k] for k in (*_TOOL_FIELDS, *[k for k in data if k not in _TOOL_FIELDS])}


def _text_echo(text: Any) -> Any:
    """``request.text.model_dump(by_alias=True, exclude_none=True)``."""
    if not isinstance(text, dict):
        return None
    return {k: v for k, v in text.items() if v is not None}


def response_object(
    request: ResponsesRequestView, rid: str, ctx: RequestContext, output: list[dict[str, Any]], status: str,
    usage: dict[str, Any] | None, *, stream_frame: bool = False,
) -> dict[str, Any]:
    """``ResponsesResponse.from_request(...).model_dump()`` (``tools`` ``[]`` in stream frames)."""
    body = request.body
    if body.get("text") is not None:
        text = _text_echo(body["text"])
    elif output and all(item.get("type") == "message" for item in output):
        text = {"format": {"type": "text"}}
    else:
        text = None
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort", "medium") if isinstance(reasoning, dict) else None  # ResponseReasoningParam's default
    parallel = body.get("parallel_tool_calls")
    choice = request.tool_choice
    named = named_choice(choice)
    return {
        "id": rid, "object": "response", "created_at": ctx.created, "model": request.model, "output": output,
        "status": status, "usage": usage, "parallel_tool_calls": True if parallel is None else parallel,
        "tool_choice": {"type": choice["type"], "name": named} if named is not None else choice,
        "tools": [] if stream_frame else [_echo_tool(t) for t in body.get("tools") or ()],
        "error": None, "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": effort if type(effort) is str and effort in _ECHOABLE_EFFORTS else None, "summary": None},
        "store": body.get("store", True), "temperature": body.get("temperature"), "text": text, "top_p": body.get("top_p"),
        "truncation": body.get("truncation", "disabled"), "user": body.get("user"), "metadata": body.get("metadata") or {},
    }


def usage_object(output_tokens: int) -> dict[str, Any]:
    """The Responses usage ``ResponsesResponse`` serialises (input always 0 here, see above)."""
    return {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": output_tokens}
