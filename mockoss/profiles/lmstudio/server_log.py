"""What LM Studio writes to its server log when it drops a gpt-oss tool call.

Public record: lmstudio-bug-tracker#876 (LM Studio 0.3.22 build 2) shows, for the model output
``<|start|>assistant<|channel|>commentary to=functions.Web Search <|constrain|>json<|message|>{…}``,
``Failed to parse tool call: Expected "<|message|>", but got "Search <|co" at index 57.``; the
call is omitted from the reply. lmstudio-bug-tracker#942 (0.3.23) shows the log line around it:
``[ERROR] [openai_gpt-oss-20b] Failed to generate a tool call (this tool call will be omitted from
the response):  Failed to parse tool call: Unexpected end of content.`` followed by
``Model Output:  <the message>``.

LM Studio is closed source; the header rule below is inferred from those two reports and is
unverified beyond them: after ``to=`` the recipient runs to the first space or special token,
spaces are skipped, an optional ``<|constrain|>`` with its word follows, spaces are skipped, and
``<|message|>`` must come next; the error quotes the next 11 characters and their index in the
message text (which starts ``<|start|>assistant``). A message that ends before ``<|message|>`` is
``Unexpected end of content.``
"""

from __future__ import annotations

import re

__all__ = ["dropped_call_log", "header_error"]

_MESSAGE = "<|message|>"
_CONSTRAIN = "<|constrain|>"
_SPECIAL = re.compile(r"<\|[a-z_]+\|>")
_SNIPPET = 11


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _word_end(text: str, i: int) -> int:
    while i < len(text) and not text[i].isspace() and not text.startswith("<|", i):
        i += 1
    return i


def header_error(message: str) -> str | None:
    """The parse error LM Studio reports for one tool-call message, else ``None``."""
    start = message.find(" to=")
    if start < 0:
        return None
    i = _skip_spaces(message, _word_end(message, start + 4))
    if message.startswith(_CONSTRAIN, i):
        i = _skip_spaces(message, _word_end(message, i + len(_CONSTRAIN)))
    if i >= len(message):
        return "Unexpected end of content."
    if message.startswith(_MESSAGE, i):
        return None
    return f'Expected "{_MESSAGE}", but got "{message[i : i + _SNIPPET]}" at index {i}.'


def _messages(text: str) -> list[str]:
    """The output's messages, each as ``<|start|>assistant…`` up to its end token (excluded)."""
    parts = text.split("<|start|>assistant")
    out = []
    for part in parts:
        if not part:
            continue
        body = re.split(r"<\|(?:end|call|return)\|>", part, maxsplit=1)[0]
        out.append("<|start|>assistant" + body)
    return out


def dropped_call_log(output_text: str, model: str) -> tuple[str, ...]:
    """Log lines for every tool-call message of ``output_text`` (the emitted Harmony text) that
    LM Studio's parser rejects: an ``[ERROR]`` line and a ``Model Output:`` line each."""
    lines: list[str] = []
    key = model.replace("/", "_")
    for message in _messages(output_text):
        header = message.split(_MESSAGE, 1)[0]
        if " to=functions." not in header and " to=" not in header:
            continue
        error = header_error(message)
        if error is None:
            continue
        lines.append(
            f"[ERROR] [{key}] Failed to generate a tool call (this tool call will be omitted from the response):  "
            f"Failed to parse tool call: {error}"
        )
        lines.append(f"Model Output:  {message}")
    return tuple(lines)
