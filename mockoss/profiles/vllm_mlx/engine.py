"""vllm-mlx's engine for gpt-oss, as its server sees it, and the server's argument coercion.

``engine_outputs`` emulates ``SimpleEngine`` + ``MLXLanguageModel.stream_generate`` over
``mlx_lm.stream_generate`` 0.31 (waybarrios/vllm-mlx@v0.6.0:vllm_mlx/engine/simple.py,
vllm_mlx/models/llm.py; read, not run): mlx-lm's streaming detokenizer (Harmony markup kept as
text), the EOS tokens ``<|return|>``, ``<|call|>``, ``<|endoftext|>`` ending generation undecoded,
one output per mlx-lm response (a token each, one more for the detokenizer's flush) and, after an
EOS, one more ``finished`` output with no text. ``coerce_arguments`` is ``server.py``
``_coerce_tool_arguments``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.mlxlm.detokenizer import StreamingDetokenizer

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["EOS", "coerce_arguments", "engine_outputs", "generated", "limited_tokens", "token_limit", "usage"]

EOS = frozenset({200002, 199999, 200012})
RETURN = 200002


def engine_outputs(tokens: list[int], limit: int) -> list[tuple[str, bool, str | None]]:
    """The engine's stream: ``(new_text, finished, finish_reason)`` per output, from the emitted
    tokens (a script that stops without an EOS is followed by ``<|return|>``)."""
    detok = StreamingDetokenizer()
    segments: list[str] = []
    for n, token in enumerate(tokens):
        if token in EOS:
            break
        detok.add_token(token)
        if n + 1 == limit:
            break
        segments.append(detok.last_segment())
    detok.finalize()
    segments.append(detok.last_segment())
    out: list[tuple[str, bool, str | None]] = []
    for count, text in enumerate(segments, 1):
        if count >= limit:
            out.append((text, True, "length"))
            return out
        out.append((text, False, None))
    out.append(("", True, "stop"))
    return out


def generated(outputs: list[tuple[str, bool, str | None]], limit: int, aggregated: bool) -> tuple[str, str, int]:
    """``(text, finish_reason, completion_tokens)`` of a non-streamed generation from the engine's
    ``outputs`` (:func:`engine_outputs`). ``aggregated``: tools reached ``SimpleEngine``, which
    then collects its own stream (the count is its outputs, less the stop token unless the limit
    cut it); else ``generate`` re-encodes the text to count it. Shared by chat and Responses."""
    raw = "".join(text for text, _, _ in outputs)
    if aggregated:
        finish = outputs[-1][2] or "stop"
        return raw, finish, len(outputs) if finish == "length" else len(outputs) - 1
    count = len(load_encoding().encode(raw, allowed_special="all"))
    return raw, "length" if count >= limit else "stop", count


def usage(prompt: int, completion: int) -> dict[str, int]:
    """The ``usage`` object of chat and completions replies and chunks."""
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def token_limit(asked: Any, default: int) -> int:
    """The generation limit: the request's ``max_tokens`` / ``max_output_tokens`` when it is a
    positive integer (not a bool), else the server's ``default``."""
    return asked if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else default


def limited_tokens(completion: Completion, limit: int) -> list[int]:
    """The tokens the engine plays: the completion cut at ``limit``, plus ``<|return|>`` when the
    script stops without an EOS (the model's next token)."""
    emission = completion.emit(limit)
    tokens = list(emission.tokens)
    if emission.finish_reason == "stop" and not any(t in EOS for t in tokens) and len(tokens) < limit:
        tokens.append(RETURN)
    return tokens


def coerce_arguments(arguments: str, name: str, tools: list[dict] | None) -> str:
    """``_coerce_tool_arguments``: only schema-typed recoveries change anything; a string-typed
    property given an object, or a string holding a number/bool/array/object for such a type."""
    schema = next((t.get("function", {}).get("parameters", {}) for t in tools or () if isinstance(t, dict) and t.get("function", {}).get("name") == name), None)
    if not schema or "properties" not in schema:
        return arguments
    try:
        args = json.loads(arguments)
    except (json.JSONDecodeError, TypeError):
        return arguments
    if not isinstance(args, dict):
        return arguments
    changed = False
    for key, value in args.items():
        prop = schema["properties"].get(key)
        if isinstance(prop, dict):
            new = _coerce_value(value, prop.get("type"))
            if new != value or type(new) is not type(value):
                args[key], changed = new, True
    if not changed:
        return arguments
    try:
        return json.dumps(args, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return arguments


_TYPES = {"string": (str,), "array": (list,), "object": (dict,), "integer": (int,), "number": (int, float), "boolean": (bool,), "null": (type(None),)}


def _matches(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES.get(kind, ()))


def _coerce_value(value: Any, declared: Any) -> Any:
    kinds = (declared,) if isinstance(declared, str) else tuple(k for k in declared if isinstance(k, str)) if isinstance(declared, list) else None
    if kinds is None or any(_matches(value, k) for k in kinds):
        return value
    if "string" in kinds and isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError:
            return value
    if not isinstance(value, str):
        return value
    for kind in kinds:
        if kind in {"array", "object", "integer", "number", "boolean", "null"}:
            try:
                decoded = json.loads(value)
                json.dumps(decoded, allow_nan=False)
            except (ValueError, TypeError):
                continue
            if _matches(decoded, kind):
                return decoded
    return value
