"""The reasoning effort Ollama's OpenAI layer takes, and the ``think`` value it makes of it.

``openai.FromChatRequest`` and ``FromResponsesRequest`` (``ollama/ollama@fb3076099``:
``openai/openai.go:523-547`` ``thinkFromReasoningEffort``, :699-708; ``openai/responses.go:575``)
read one effort: on ``/v1/chat/completions`` ``reasoning.effort`` when the body has a
``reasoning`` object, else ``reasoning_effort``; on ``/v1/responses`` ``reasoning.effort``. They
accept ``none`` (no thinking), ``minimal`` (→ ``low``), ``low``, ``medium``, ``high``, ``max``,
``xhigh`` and ``ultra`` (→ ``max``), and an empty or absent effort (the model's default); any
other string is a 400 ``invalid reasoning value: "…" (must be …)`` (``middleware/openai.go:462-466``,
:1174-1178). The fields are Go strings: another JSON type fails ``ShouldBindJSON`` first with Go's
``json: cannot unmarshal …`` 400 (``null`` is the empty string).

mockoss's shared chat schema (vLLM's) takes ``minimal``/``low``/``medium``/``high`` only, so the
ollama profile's ``/v1`` scope drops a ``reasoning_effort`` the schema would judge before it
validates (:func:`schema_body`) and refuses what Ollama refuses itself (:func:`effort_refusal`);
the prompt count maps the effort as Ollama does (:func:`think_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["THINK", "effort_refusal", "schema_body", "think_of"]

#: ``thinkFromReasoningEffort``: effort → the native ``think`` value (``None``: unset).
THINK: Mapping[str, bool | str | None] = {
    "": None,
    "none": False,
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "max": "max",
    "xhigh": "max",
    "ultra": "max",
}
#: The shared chat schema's ``reasoning_effort`` values (:class:`mockoss.schemas.chat.ChatCompletionRequest`).
_SCHEMA_EFFORTS = frozenset({"minimal", "low", "medium", "high"})
_GO_KINDS = {bool: "bool", int: "number", float: "number", list: "array", dict: "object"}
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _fields(endpoint: str, body: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """``(Go struct, field path, value)`` of each effort field Go decodes from ``body``."""
    reasoning = body.get("reasoning")
    found = []
    if isinstance(reasoning, Mapping) and "effort" in reasoning:
        found.append(
            ("Reasoning" if endpoint == "chat" else "ResponsesReasoning", "reasoning.effort", reasoning["effort"])
        )
    if endpoint == "chat" and "reasoning_effort" in body:
        found.append(("ChatCompletionRequest", "reasoning_effort", body["reasoning_effort"]))
        if len(found) == 2 and list(body).index("reasoning_effort") < list(body).index("reasoning"):
            found.reverse()  # Go reports the first field it cannot decode, in the body's order
    return found


def requested(endpoint: str, body: Mapping[str, Any]) -> Any:
    """The effort Ollama reads from ``body`` (``None`` when absent or ``null``)."""
    reasoning = body.get("reasoning")
    if isinstance(reasoning, Mapping):
        return reasoning.get("effort")
    return body.get("reasoning_effort") if endpoint == "chat" else None


def think_of(effort: Any) -> bool | str:
    """The ``think`` the gpt-oss template gets for ``effort``: :data:`THINK`'s value, then harmony's
    ``max`` → ``high`` (``server/routes.go:2662-2668``); unset or not an accepted string → ``True``
    (the thinking model's default, ``server/routes.go:2616-2620``)."""
    think = THINK.get(effort) if isinstance(effort, str) else None
    if think is None:
        return True
    return "high" if think == "max" else think


def go_quote(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``): double quotes, ``\\"`` and ``\\\\``, printable runes as
    they are, ``\\n``-style escapes, else ``\\xXX`` (below U+0020, U+007F), ``\\uXXXX``,
    ``\\UXXXXXXXX``; a lone surrogate is U+FFFD, as Go decodes it."""
    out = ['"']
    for char in text:
        if "\ud800" <= char <= "\udfff":
            char = "\ufffd"
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out) + '"'


def effort_refusal(endpoint: str, body: Any) -> str | None:
    """Ollama's 400 message for the effort of a ``/v1`` ``endpoint`` (``"chat"`` or
    ``"responses"``) request ``body`` (parsed JSON), else ``None``: Go's decoding error for an
    effort field that is not a string (nor ``null``), then ``thinkFromReasoningEffort``'s for a
    string it does not know (see the module docstring)."""
    if not isinstance(body, Mapping) or endpoint not in ("chat", "responses"):
        return None
    for struct, field, value in _fields(endpoint, body):
        if value is not None and not isinstance(value, str):
            kind = _GO_KINDS.get(type(value), "number")
            return f"json: cannot unmarshal {kind} into Go struct field {struct}.{field} of type string"
    effort = requested(endpoint, body)
    if effort is None or effort in THINK:
        return None
    return (
        f"invalid reasoning value: {go_quote(effort)} "
        '(must be "minimal", "low", "medium", "high", "xhigh", "ultra", "max", or "none")'
    )


def schema_body(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` for the shared schema of ``endpoint``: on ``"chat"``, without a
    ``reasoning_effort`` the schema would refuse (a value Ollama takes, or one
    :func:`effort_refusal` refuses in Ollama's words); else ``body`` itself."""
    if endpoint != "chat" or "reasoning_effort" not in body:
        return body
    effort = body["reasoning_effort"]
    if effort is None or (isinstance(effort, str) and effort in _SCHEMA_EFFORTS):
        return body
    return {key: value for key, value in body.items() if key != "reasoning_effort"}
