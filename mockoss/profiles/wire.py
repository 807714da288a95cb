"""JSON as the emulated servers write it on the wire."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]  # the encoders' own
from typing import Any

__all__ = ["any_leaf", "dumps", "dumps_json", "finite", "loads", "rebuild"]

#: ``allow_nan=False``: a non-finite float is never written as ``NaN``/``Infinity`` (not JSON); see
#: :func:`finite`.
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def dumps(value: Any) -> str:
    """Compact JSON with UTF-8 kept, keys in insertion order: what pydantic's
    ``model_dump_json``, Starlette's ``JSONResponse`` (vLLM) and nlohmann's ``dump(-1)``
    (llama.cpp) write. Same output as ``json.dumps(value, separators=(",", ":"),
    ensure_ascii=False)``, with one shared encoder instead of one per call.

    A value nested too deep for the encoder's recursion (it takes one Python recursion level per
    container) is written by :func:`_dumps_deep` instead, with the same output: a request may
    carry data nested nearly as deep as :func:`json.loads` could parse it, and a profile that
    echoes it (vLLM Responses' ``metadata``, ``tools``, ``text``; ...) encodes it from further
    down the stack, where the encoder's ``RecursionError`` would be an unscripted 500.

    A non-finite float is written ``null`` (:func:`finite`), never ``NaN``/``Infinity``; the
    values without one (all but a request's echo of ``1e400`` or ``NaN``) cost nothing more.
    """
    try:
        return _ENCODE(value)
    except RecursionError:
        return _dumps_deep(finite(value), separators=(",", ":"), ensure_ascii=False)
    except ValueError as exc:
        if not _out_of_range(exc):
            raise
        cleaned = finite(value)
        if cleaned is value:  # a non-finite dict key (finite() replaces values only): what the retry loop ended in
            return _dumps_deep(value, separators=(",", ":"), ensure_ascii=False)
        return dumps(cleaned)


def _out_of_range(error: ValueError) -> bool:
    """Whether ``error`` is :mod:`json`'s refusal of a non-finite float (``allow_nan=False``)."""
    return str(error).startswith("Out of range float values")


def finite(value: Any) -> Any:
    """``value`` with each ``NaN``/``inf``/``-inf`` float replaced by ``None``; ``value`` itself
    when it holds none.

    A request may carry them: :func:`json.loads` (what the Python servers parse bodies with) reads
    ``NaN``/``Infinity`` and reads ``1e400`` (valid JSON) as ``inf``. Echoed as is they would be
    written ``Infinity``, which is not JSON (breaker report D6). pydantic-core's JSON serializer,
    which writes the Python servers' replies (``model_dump_json``; vllm-project/vllm@f6e9325:
    vllm/entrypoints/openai/responses/api_router.py streams its events so), writes them ``null``
    (``ser_json_inf_nan``, default ``"null"``), and so do orjson (SGLang) and this function.
    A loop over a stack, not recursion (:func:`rebuild`): request data nests as deep as
    :func:`json.loads` parses.
    """
    if not any_leaf(value, _nonfinite):
        return value
    return rebuild(value, _null_if_nonfinite)


def _null_if_nonfinite(item: Any) -> Any:
    return None if _nonfinite(item) else item


def rebuild(
    value: Any,
    leaf: Callable[[Any], Any] | None = None,
    *,
    mapping: type | tuple[type, ...] = dict,
    sequence: type | tuple[type, ...] = (list, tuple),
    entries: Callable[[Any], Iterable[tuple[Any, Any]]] | None = None,
) -> Any:
    """A new copy of ``value``, made by a loop over a stack, not recursion: request data nests as
    deep as :func:`json.loads` parses, past what a recursive copy reaches from down the stack.

    An instance of ``mapping`` becomes a ``dict`` of the ``(key, item)`` pairs ``entries(it)``
    gives (default: its own items, in order); a key given twice keeps its first place and its
    last item, as a ``dict`` display does. An instance of ``sequence`` that is not a ``str``
    becomes a ``list`` of its items. Each item is copied the same way; anything else becomes
    ``leaf(it)`` (itself without ``leaf``). ``mapping`` is tested first. For parsed JSON: a
    cycle would never end. Used by :func:`finite` and by the profiles' deep fallbacks of their
    own recursive copies (Ollama's ``go_any`` and ``sorted_map``, gptoss_ref's error entries),
    which pass their containers, key order and leaf conversion.
    """
    root: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while todo:
        target, slot, item = todo.pop()
        if isinstance(item, mapping):
            if entries is None:
                shell: Any = dict.fromkeys(item)  # the keys in their order, items filled below
                todo.extend((shell, key, element) for key, element in item.items())
            else:
                pairs = dict(entries(item))
                shell = dict.fromkeys(pairs)
                todo.extend((shell, key, element) for key, element in pairs.items())
        elif isinstance(item, sequence) and not isinstance(item, str):
            shell = [None] * len(item)
            todo.extend((shell, index, element) for index, element in enumerate(item))
        else:
            shell = item if leaf is None else leaf(item)
        target[slot] = shell
    return root[0]


def any_leaf(value: Any, predicate: Callable[[Any], bool]) -> bool:
    """Whether ``predicate`` holds for a value anywhere in ``value`` that is not a dict, list or
    tuple (dict values, list and tuple items), by a loop over a stack, not recursion: request
    data nests as deep as :func:`json.loads` parses. For parsed JSON (which holds no cycles)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending += item.values()
        elif isinstance(item, (list, tuple)):
            pending += item
        elif predicate(item):
            return True
    return False


def _nonfinite(item: Any) -> bool:
    return isinstance(item, float) and not math.isfinite(item)


def loads(text: str | bytes) -> Any:
    """:func:`json.loads` of JSON a profile wrote itself (the openai profile reads the vLLM
    profile's bodies and frames back): nested as deep as the request data it echoes, which
    :func:`json.loads` parsed from near the top of the stack. Parsed again in a new thread (a fresh
    recursion budget, so as deep as any request body) when this stack is too deep for it."""
    try:
        return json.loads(text)
    except RecursionError:
        pass
    box: list[tuple[bool, Any]] = []

    def parse() -> None:
        try:
            box.append((True, json.loads(text)))
        except BaseException as exc:  # noqa: BLE001  # handed back to the caller's thread
            box.append((False, exc))

    worker = threading.Thread(target=parse, name="mockoss-deep-json", daemon=True)
    worker.start()
    worker.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


class _Text:
    """A piece of output text on :func:`_dumps_deep`'s stack (not a value to encode)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Leave:
    """Leaving a container on :func:`_dumps_deep`'s stack: its closing bracket; it is off the path."""

    __slots__ = ("key", "text")

    def __init__(self, key: int, text: str) -> None:
        self.key, self.text = key, text


def _float(value: float) -> str:
    """A float as ``json.JSONEncoder`` writes it (``allow_nan=True``)."""
    if math.isnan(value):
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any, quote: Any) -> str:
    """A dict key as ``json.JSONEncoder`` converts it (``skipkeys=False``), quoted."""
    if isinstance(key, str):
        return quote(key)  # type: ignore[no-any-return]
    if isinstance(key, float):
        return f'"{_float(key)}"'
    if key is True or key is False or key is None:
        return '"true"' if key is True else '"false"' if key is False else '"null"'
    if isinstance(key, int):
        return f'"{int.__repr__(key)}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def dumps_json(value: Any, *, indent: int | None = None, separators: tuple[str, str] | None = None, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, indent=…, separators=…, ensure_ascii=…)``, at any depth: a value nested
    too deep for :mod:`json`'s recursion is written by :func:`_dumps_deep`, the same text. For the
    profiles that write another layout than :func:`dumps` (LM Studio's two-space indent, mlx-lm's
    defaults). A non-finite float is written ``null``, as :func:`dumps` does."""
    try:
        return json.dumps(value, indent=indent, separators=separators, ensure_ascii=ensure_ascii, allow_nan=False)
    except RecursionError:
        return _dumps_deep(finite(value), indent=indent, separators=separators, ensure_ascii=ensure_ascii)
    except ValueError as exc:
        if not _out_of_range(exc):
            raise
        cleaned = finite(value)
        if cleaned is value:  # as in dumps
            return _dumps_deep(value, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
        return dumps_json(cleaned, indent=indent, separators=separators, ensure_ascii=ensure_ascii)


def _dumps_deep(value: Any, *, indent: int | None = None, separators: tuple[str, str] | None = None, ensure_ascii: bool = True) -> str:
    """:func:`json.dumps` without recursion: an explicit stack, so any depth. Same output as
    :mod:`json`'s encoders for JSON data (``tests/profiles/test_wire_deep.py`` compares them),
    same checks in the same order: ``None``/``True``/``False``, ``str``, ``int``, ``float``,
    ``list``/``tuple``, ``dict``, else ``TypeError``; a container met again on its own path is
    ``ValueError("Circular reference detected")``. ``separators`` defaults as :func:`json.dumps`'s
    do (``", "``/``": "``, ``","`` after an item when indenting); :func:`dumps` passes its own.
    Pure Python, so only used when the encoder runs out of recursion."""
    if separators is None:
        separators = (", " if indent is None else ",", ": ")
    item_sep, key_sep = separators
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    out: list[str] = []
    path: set[int] = set()
    stack: list[Any] = [(value, 0)]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            out.append(item.text)
            continue
        if type(item) is _Leave:
            path.discard(item.key)
            out.append(item.text)
            continue
        item, level = item
        if item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, str):
            out.append(quote(item))
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            out.append(_float(item))
        elif isinstance(item, (list, tuple, dict)):
            is_dict = isinstance(item, dict)
            if not item:
                out.append("{}" if is_dict else "[]")
                continue
            if id(item) in path:
                raise ValueError("Circular reference detected")
            path.add(id(item))
            if indent is None:
                first, between, close = "", item_sep, ""
            else:
                first = "\n" + " " * (indent * (level + 1))
                between, close = item_sep + first, "\n" + " " * (indent * level)
            out.append(("{" if is_dict else "[") + first)
            stack.append(_Leave(id(item), close + ("}" if is_dict else "]")))
            if is_dict:
                pairs = list(item.items())
                for i in range(len(pairs) - 1, -1, -1):
                    key, element = pairs[i]
                    stack.append((element, level + 1))
                    stack.append(_Text((between if i else "") + _key(key, quote) + key_sep))
            else:
                for i in range(len(item) - 1, -1, -1):
                    stack.append((item[i], level + 1))
                    if i:
                        stack.append(_Text(between))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(out)
