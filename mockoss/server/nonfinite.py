"""Numbers a request body holds that JSON replies cannot carry: ``NaN``, ``Infinity``, ``1e400``.

:func:`json.loads` (what vLLM, SGLang and the other Python servers parse bodies with, FastAPI's
``Request.json()``) reads the literals ``NaN``/``Infinity``/``-Infinity``, which are not JSON
(RFC 8259 section 6), and reads a number too large for a double (``1e400``, valid JSON: the RFC
sets no exponent limit) as ``inf``. Echoed back as is, such a value made mockoss write
``"temperature":Infinity``: a reply that strict JSON parsers (JavaScript, Go, serde) refuse
(breaker report D6), and on the ollama profile an unscripted 500 (D5).

Two answers, by server:

* Ollama (Go, ``encoding/json`` through gin's ``ShouldBindJSON``, ollama/ollama@fb307609:
  server/routes.go ``GenerateHandler``/``ChatHandler``, middleware/openai.go
  ``ResponsesMiddleware``) refuses the body with a 400 before any handler runs:
  ``NaN``/``Infinity`` fail the scanner (``invalid character 'N' looking for beginning of
  value``), and an out-of-range number fails ``strconv.ParseFloat`` when decoded into a
  ``float64`` or ``any`` (``json: cannot unmarshal number 1e400 into Go struct field
  GenerateRequest.options of type float64``: ``options`` is a ``map[string]any``, whose elements
  add nothing to the error's field path). :func:`go_decode_error` gives that text for the fields
  listed in :data:`_GO_FIELDS` (numbers, ``any``). Elsewhere Go skips the number (a field its
  struct does not declare) or decodes it in a way mockoss does not model; mockoss then answers,
  and the ollama profile's Go-style encoder writes any such value it echoes as ``null``
  (:func:`mockoss.profiles.ollama.gojson.dumps`), never a 500.
* The Python servers accept the value, and pydantic-core's JSON serializer writes a non-finite
  float as ``null`` (``ser_json_inf_nan="null"``, its default: pydantic 2.14.4
  ``pydantic/config.py``, "Defaults to 'null'"; vLLM's streamed Responses events
  are ``model_dump_json``, vllm-project/vllm@f6e9325:vllm/entrypoints/openai/responses/
  api_router.py; SGLang's replies are orjson, which writes ``null`` too: not checked against
  SGLang's source here). The profiles' encoders
  do the same (:func:`mockoss.profiles.wire.finite`). (vLLM's non-streamed Responses reply goes
  through Starlette's ``JSONResponse``, whose ``allow_nan=False`` fails the render
  (encode/starlette@02aa6eb9:starlette/responses.py ``JSONResponse.render``): a bare 500
  "Internal Server Error". mockoss writes the ``null`` its streamed events show instead, what a
  user would expect of a request the server accepted.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from pydantic_core import from_json

from mockoss.profiles.wire import any_leaf

__all__ = ["go_decode_error"]


#: The least integer ``float()`` rounds past the largest double (``OverflowError``), as Go's
#: ``strconv.ParseFloat`` rounds it to infinity (``ErrRange``): below 2**1024, which
#: ``bit_length() > 1024`` missed.
_DOUBLE_OVERFLOW = 2**1024 - 2**970


def _beyond_double(value: Any) -> bool:
    """A number Go's ``strconv.ParseFloat`` refuses: ``inf``/``nan`` (Python read ``1e400`` or a
    ``NaN`` literal) or an integer beyond a double's range."""
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _DOUBLE_OVERFLOW


class _Overflow:
    """A number literal outside a double's range, as written in the body."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _float(literal: str) -> Any:
    value = float(literal)
    return value if math.isfinite(value) else _Overflow(literal)


def _int(literal: str) -> Any:
    value = int(literal)
    try:
        float(value)
    except OverflowError:  # Go decodes a number into any/float64 with ParseFloat: out of range
        return _Overflow(literal)
    return value


class _Constant(Exception):
    pass


def _constant(name: str) -> Any:
    raise _Constant(name)


#: Per endpoint: Ollama's request struct, and the Go type behind each top-level field that takes
#: a number (ollama/ollama@fb307609: api/types.go ``GenerateRequest``/``ChatRequest``, whose
#: ``options`` is ``map[string]any`` and ``keep_alive`` a ``Duration`` decoding into ``any``;
#: openai/openai.go ``ChatCompletionRequest``; openai/responses.go ``ResponsesRequest``).
_GO_FIELDS: dict[str, tuple[str, dict[str, str]]] = {
    "ollama.generate": (
        "GenerateRequest",
        {"options": "float64", "keep_alive": "float64", "top_logprobs": "int", "context": "int"},
    ),
    "ollama.chat": ("ChatRequest", {"options": "float64", "keep_alive": "float64", "top_logprobs": "int"}),
    "chat": (
        "ChatCompletionRequest",
        {
            "temperature": "float64",
            "top_p": "float64",
            "frequency_penalty": "float64",
            "presence_penalty": "float64",
            "max_tokens": "int",
            "seed": "int",
            "top_logprobs": "int",
        },
    ),
    "completions": (
        "CompletionRequest",
        {
            "temperature": "float32",
            "top_p": "float32",
            "frequency_penalty": "float32",
            "presence_penalty": "float32",
            "max_tokens": "int",
            "seed": "int",
        },
    ),
    "responses": ("ResponsesRequest", {"temperature": "float64", "top_p": "float64", "max_output_tokens": "int"}),
}


def _numeric_fields_overflow(endpoint: str, body: dict[str, Any], types: dict[str, str]) -> bool:
    if any(name in body and any_leaf(body[name], _beyond_double) for name in types):
        return True
    tools = body.get("tools") if endpoint == "responses" else None
    return isinstance(tools, list) and any(
        isinstance(t, dict) and any_leaf(t.get("parameters"), _beyond_double) for t in tools
    )


def _overflows(value: Any) -> Iterator[tuple[_Overflow, list[str]]]:
    """The out-of-range literals in document order (dicts keep it), each with its keys' path."""
    stack: list[tuple[Any, list[str]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Overflow):
            yield item, path
        elif isinstance(item, dict):
            stack.extend((v, [*path, k]) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((v, path) for v in reversed(item))


def _literal_constant(raw: bytes) -> bool:
    """Whether ``raw`` holds a ``NaN``/``Infinity`` literal, not just the word in a string: jiter
    refuses the literals when told to (``allow_inf_nan=False``) and reads words in strings as
    text. A body it refuses for another reason (a lone surrogate, nesting deeper than it parses)
    counts as holding one: the caller's exact parse decides. A chat message that merely said
    "NaN" sent a 50 KB body through a second, hooked ``json.loads`` and a walk of every value:
    0.44 ms instead of 0.055 (a review's measurement)."""
    try:
        from_json(raw, allow_inf_nan=False)
    except ValueError:
        return True
    return False


def go_decode_error(endpoint: str, body: Any, raw: bytes | None) -> str | None:
    """What Go's ``encoding/json`` says of a body holding ``NaN``/``Infinity``, or an
    out-of-range number in a field of :data:`_GO_FIELDS` (see the module docstring), else
    ``None``. Called for the ollama profile only; an ordinary body costs a search of its bytes
    for ``NaN``/``Infinity`` and a walk of the few numeric fields it sends."""
    if not isinstance(body, dict) or raw is None:
        return None
    struct, types = _GO_FIELDS.get(endpoint, ("Request", {}))
    literal = (b"NaN" in raw or b"Infinity" in raw) and _literal_constant(raw)
    if not literal and not _numeric_fields_overflow(endpoint, body, types):
        return None
    try:
        parsed = json.loads(raw, parse_float=_float, parse_int=_int, parse_constant=_constant)
    except _Constant as exc:
        from mockoss.profiles.ollama.goscan import syntax_error

        text = raw.decode("utf-8", "replace")
        return syntax_error(text) or f"invalid character '{str(exc)[0]}' looking for beginning of value"
    except (ValueError, RecursionError):
        return None  # not JSON for Python either: the ordinary checks answer it
    # Go skips a field its struct does not declare and keeps decoding; the first error in a
    # declared field is the one it returns (decodeState.saveError keeps the first error and
    # unmarshal returns it at the end: golang/go@0082d475:src/encoding/json/decode.go).
    for overflow, path in _overflows(parsed):
        if endpoint == "responses" and len(path) >= 2 and path[:2] == ["tools", "parameters"]:
            struct, field, kind = "ResponsesTool", "tools.parameters", "float64"  # map[string]any
        elif path and path[0] in types:
            field, kind = path[0], types[path[0]]
        else:
            continue  # a field Go skips (unknown) or decodes otherwise: see finite()
        return f"json: cannot unmarshal number {overflow.literal} into Go struct field {struct}.{field} of type {kind}"
    return None
