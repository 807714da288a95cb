"""Prompt token counts for Ollama's native requests (``prompt_eval_count``).

Ollama renders gpt-oss prompts with its own Harmony renderer; mockoss approximates the count by
translating a native request into the equivalent Chat Completions body and rendering that with
:func:`mockoss.harmony.prompt.render_chat_prompt` (openai-harmony's renderer): ``thinking`` →
``reasoning``, tool-call ``arguments`` objects → JSON strings, ``think`` levels → ``reasoning_effort``,
``/api/generate``'s ``system`` + ``prompt`` → a system and a user message. A ``raw`` generate prompt is
encoded as it is. Counts are close to Ollama's, not identical.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.prompt import render_chat_prompt

__all__ = ["render_native_chat_prompt", "render_native_generate_prompt"]


def _effort(think: Any) -> str | None:
    if think in ("low", "medium", "high"):
        return str(think)
    return "high" if think == "max" else None


def _message(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, Mapping):
        return None
    out: dict[str, Any] = {"role": str(message.get("role") or "").lower(), "content": message.get("content") or ""}
    if message.get("thinking"):
        out["reasoning"] = message["thinking"]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [
            {
                "id": call.get("id") or f"call_{index}",
                "type": "function",
                "function": {
                    "name": (call.get("function") or {}).get("name", ""),
                    "arguments": json.dumps((call.get("function") or {}).get("arguments") or {}),
                },
            }
            for index, call in enumerate(calls)
            if isinstance(call, Mapping)
        ]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


def render_native_chat_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /api/chat`` body (see the module docstring)."""
    messages = [m for m in map(_message, body.get("messages") or []) if m is not None]
    chat: dict[str, Any] = {"messages": messages or [{"role": "user", "content": ""}]}
    if body.get("tools"):
        chat["tools"] = body["tools"]
    if (effort := _effort(body.get("think"))) is not None:
        chat["reasoning_effort"] = effort
    return render_chat_prompt(chat)


def render_native_generate_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /api/generate`` body (see the module docstring)."""
    prompt = body.get("prompt") or ""
    if body.get("raw"):
        return load_encoding().encode(str(prompt), allowed_special="all")
    messages = []
    if body.get("system"):
        messages.append({"role": "system", "content": body["system"]})
    messages.append({"role": "user", "content": prompt})
    chat: dict[str, Any] = {"messages": messages}
    if (effort := _effort(body.get("think"))) is not None:
        chat["reasoning_effort"] = effort
    return _context_ids(body.get("context")) + render_chat_prompt(chat)


def _context_ids(context: Any) -> list[int]:
    """A ``/api/generate`` request's ``context`` (deprecated), as the prompt's first tokens.

    Ollama detokenizes it and writes the text in front of the rendered prompt, which it then
    tokenizes whole (``ollama/ollama@fb307609:server/routes.go``, ``GenerateHandler``: ``if
    req.Context != nil { … r.Detokenize(…, req.Context) … b.WriteString(s) }``, then ``prompt =
    b.String()`` after the rendered prompt). mockoss keeps the ids as given: the same tokens for a
    context that was itself a tokenization (what Ollama answered the turn before), and no second
    tokenization whose cost could grow with a word's length. A context holding an id the
    vocabulary lacks is left out (what Ollama's detokenizer does with one is not documented)."""
    if not context or not isinstance(context, list):
        return []
    try:
        load_encoding().decode(context)  # checks every id; linear in their number
    except Exception:  # noqa: BLE001  (an id out of the vocabulary: openai-harmony's HarmonyError)
        return []
    return list(context)
