"""Responses output items as late-2025 vLLM mapped Harmony messages (``responses_mapping="2025"``).

``vllm/entrypoints/harmony_utils.py`` ``parse_output_message`` (late 2025, before
``responses/harmony.py`` and recipient normalisation): recipients are used as parsed, so
``<|constrain|>json`` on a final message is an MCP recipient (vllm-project/vllm#45570). Per message:

* author not the assistant → nothing;
* ``browser.*`` → ``web_search_call`` (as in 2026);
* ``commentary`` and ``recipient.startswith("functions.")`` → ``function_call`` named
  ``recipient.split(".")[-1]``, ``status`` unset (``null``); ``analysis to=functions.x`` does not
  qualify and falls through to MCP;
* ``recipient.startswith(("python", "browser", "container"))`` → ``reasoning``;
* any other recipient → ``mcp_call`` (``server_label`` = first dotted segment, ``name`` = last);
* no recipient: ``analysis`` and ``commentary`` (preambles) → ``reasoning``, ``final`` →
  ``message``, other channels → ``ValueError("Unknown channel: …")``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openai_harmony import Message

from mockoss.profiles.vllm.responses_stream import MessageView, TemplateBuilder

__all__ = ["items_2025", "raw_view"]

_BUILTINS = ("python", "browser", "container")


def raw_view(message: Message) -> MessageView:
    """A completed message with its recipient exactly as openai-harmony parsed it."""
    role = message.author.role
    content = message.content
    text = getattr(content[0], "text", "") if content else ""
    return MessageView(role=getattr(role, "value", role), channel=message.channel, recipient=message.recipient, text=text)


def items_2025(
    m: MessageView,
    incomplete: bool,
    b: TemplateBuilder,
    reasoning: Callable[[str, TemplateBuilder], dict[str, Any]],
    web_search: Callable[[str, str, TemplateBuilder], dict[str, Any]],
    unknown_channel: Callable[[str | None], Exception],
) -> list[dict[str, Any]]:
    """Output items for one message; the builders are shared with the 2026 mapping."""
    if m.role != "assistant":
        return []
    status = "incomplete" if incomplete else "completed"
    recipient = m.recipient
    if recipient is not None:
        if recipient.startswith("browser."):
            return [] if incomplete else [web_search(m.text, recipient, b)]
        if m.channel == "commentary" and recipient.startswith("functions."):
            rid = b.new_id()
            call = {"arguments": m.text, "call_id": "call_" + rid, "name": recipient.split(".")[-1]}
            return [{**call, "type": "function_call", "id": "fc_" + rid, "status": None}]
        if recipient.startswith(_BUILTINS):
            return [reasoning(m.text, b)]
        label, name = recipient.split(".")[0], recipient.split(".")[-1]
        return [
            {
                "id": "mcp_" + b.new_id(),
                "arguments": m.text,
                "name": name,
                "server_label": label,
                "type": "mcp_call",
                "approval_request_id": None,
                "error": None,
                "output": None,
                "status": status,
            }
        ]
    if m.channel in ("analysis", "commentary"):
        return [reasoning(m.text, b)]
    if m.channel == "final":
        content = [{"annotations": [], "text": m.text, "type": "output_text", "logprobs": None}]
        return [{"id": "msg_" + b.new_id(), "content": content, "role": "assistant", "status": status, "type": "message"}]
    raise unknown_channel(m.channel)
