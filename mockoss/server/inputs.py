"""Request bodies no reply can be built from, found before a step is played (each a documented 400).

Framework-free checks used by :meth:`MockServer._validate <mockoss.server.core.MockServer>`:

* a lone UTF-16 surrogate (``"\\ud800"``) in a field the reply echoes (``model``; the Responses
  ``instructions`` and ``metadata``): JSON text allows the escape, but it is not Unicode (RFC 8259
  §8.2), so no UTF-8 reply can carry it back. Ollama is exempt: Go's ``encoding/json`` replaces
  it with U+FFFD while decoding, and the ollama profile already answers that way.
* a ``/v1/completions`` prompt token id outside the vocabulary: vLLM answers 400 ``Token id N is
  out of vocabulary`` (vllm-project/vllm@009daae:vllm/v1/engine/input_processor.py,
  ``_validate_model_input``); gpt-oss's vocabulary is 201,088 ids (``vocab_size`` in the model's
  config.json), so the largest valid id is 201,087.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ECHOED_FIELDS", "MAX_TOKEN_ID", "lone_surrogate_field", "out_of_vocabulary"]

#: Largest token id of gpt-oss's vocabulary (o200k_harmony, 201,088 ids).
MAX_TOKEN_ID = 201_087
#: Top-level fields a reply echoes back as text.
ECHOED_FIELDS = ("model", "instructions", "metadata")


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in ``value`` (keys included) is not encodable as UTF-8. A loop
    over a stack, not recursion: nesting as deep as the JSON parser accepts is fine here."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, Mapping):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item
    return False


def lone_surrogate_field(body: Mapping[str, Any]) -> str | None:
    """The first of :data:`ECHOED_FIELDS` holding a lone surrogate, else ``None``.

    Looks at the parsed fields themselves (a short ``model`` costs one UTF-8 encode), not at
    the raw body: a scan of the whole body for a ``\\uD8xx``-``\\uDFxx`` escape cost ~6 us on a 24 KB
    agent turn, and missed a surrogate sent as its three UTF-8-style bytes, which
    :func:`json.loads` decodes too (``surrogatepass``).
    """
    for name in ECHOED_FIELDS:
        if name in body:
            value = body[name]
            if type(value) is str and value.isascii():
                continue  # (no surrogate is ASCII; isascii reads a flag the string keeps: 0.3 us less a request)
            if _has_lone_surrogate(value):
                return name
    return None


def out_of_vocabulary(body: Mapping[str, Any]) -> int | None:
    """The largest (or a negative) token id of a token-id ``prompt`` outside the vocabulary, else ``None``."""
    prompt = body.get("prompt")
    if not isinstance(prompt, list) or not prompt:
        return None
    rows = prompt if isinstance(prompt[0], list) else [prompt]
    ids = [token for row in rows if isinstance(row, list) for token in row if isinstance(token, int) and not isinstance(token, bool)]
    if not ids:
        return None
    low, high = min(ids), max(ids)
    if high > MAX_TOKEN_ID:
        return high
    return low if low < 0 else None
