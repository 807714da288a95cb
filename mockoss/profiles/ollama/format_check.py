"""Ollama's ``format`` (structured outputs) on gpt-oss, as a request-log note.

Ollama constrains the answer of a gpt-oss model to ``format`` (``"json"`` or a JSON schema): once
the model's thinking is done it re-prompts with ``<|end|><|start|>assistant<|channel|>final
<|message|>`` and samples the final message under the format's grammar (``server/routes.go``,
``ChatHandler``, ollama/ollama@fb307609). A scripted completion is not sampled, so mockoss cannot
constrain it; instead, when the scripted final message is not JSON, the request log says so
(``RecordedRequest.server_log``): the test scripts an answer the real server would not produce.
Schema validation beyond "is JSON" is not done.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["format_note"]


def format_note(completion: Completion, body: Mapping[str, Any]) -> str | None:
    """The note for a request with ``format`` whose scripted final text is not JSON, else ``None``."""
    fmt = body.get("format")
    if fmt is None or fmt == "" or fmt == {}:
        return None
    trace = completion.trace()
    final = "".join(part.text for m in trace.messages if m.channel == "final" for part in m.content if hasattr(part, "text"))
    if not final:
        return None
    try:
        json.loads(final)
    except ValueError:
        return (
            "mockoss: format is set, and Ollama constrains gpt-oss's final message to it; the scripted "
            f"final is not JSON, so the real server would not return it: {final[:80]!r}"
        )
    return None
