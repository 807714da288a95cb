"""llama-server's lenient reading of request fields: a field of the wrong JSON type is its default.

mockoss checks every request body with its shared request schemas (:mod:`mockoss.schemas`,
vLLM's), whose pydantic fields refuse a value of the wrong type (``temperature: "hot"``: 400) or
coerce it (``max_tokens: "5"`` read as 5). llama-server has no such schema: it reads each field
with ``json_value(body, key, default)`` (Telosnex/fllama@1d28604d, build b9553:
``src/llama.cpp/tools/server/server-common.h``), which returns the default when the value is
``null`` or does not convert to the C++ type of the default (nlohmann's ``type_error``, logged as
``Wrong type supplied for parameter '…'``). nlohmann's ``get<T>()`` takes, for an arithmetic
``T``, any JSON number or boolean (a float is truncated toward zero for an ``int``; ``true`` is
1); for ``bool`` only a boolean; for ``std::string`` only a string; a ``json`` default takes
anything. :func:`lenient_body` gives the schema the body as llama-server reads it: it drops
(reads as absent) every schema field llama-server would read as its default, and rewrites the
ones it reads differently, so that the schema neither refuses nor coerces them. It is called by
:meth:`mockoss.server.core.MockServer._validate` (``request_check.py``) through the profile's
:meth:`~mockoss.profiles.llamacpp.LlamacppProfile.lenient_body`, before the schema; the body the
profile itself reads (``request.body``: its refusals, parser choice, template) is unchanged.

Where each field is read at b9553 (``tools/server/``): ``oaicompat_chat_params_parse``
(``server-common.cpp``) reads ``stream`` (bool), ``tool_choice`` (string, default ``"auto"``),
``parallel_tool_calls`` (bool), then copies every body field into the task's parameters, which
``server_task::params_from_json_cmpl`` (``server-task.cpp``) reads: ``stream`` (bool),
``stream_options`` (any JSON; its ``include_usage`` a bool), ``max_tokens`` (int, default the
server's ``n_predict``, -1), ``n_predict`` (int, default ``max_completion_tokens`` (int, default
``max_tokens``)), ``n_cmpl`` (int, default ``n`` (int, default 1)), ``temperature``/``top_p``
(float). ``/v1/responses`` converts the body first (``server_chat_convert_responses_to_chatcmpl``,
``server-chat.cpp``): ``instructions`` and ``previous_response_id`` read as strings,
``max_output_tokens`` renamed ``max_tokens``, non-``function`` tools skipped, every other field
kept for the chat parse (``reasoning``, ``store``, ``include``, ``metadata`` are read nowhere).
``model``, ``include_reasoning`` and ``reasoning_effort`` are read nowhere either (a single-model
server; neither ``tools/server`` nor ``common`` names ``reasoning_effort`` at b9553). The limit:
``n_predict == -1`` is unlimited, any other value stops after ``max(n_predict, 1)`` tokens
(``server_slot::has_budget``, checked once a token is decoded; ``server-context.cpp``).

The same lines at ggml-org/llama.cpp@006639c3 (``server-common.cpp``; its ``server-task.cpp``
is not stored, checked at 00efb3e1: the same reads): ``parallel_tool_calls`` defaults to false
rather than the template's capability (a bool either way); the Responses converter refuses a
non-``function`` tool (400 ``'type' of tool must be 'function'``) where b9553 skips it (this
profile follows b9553 there, :mod:`.responses_input`).

Not changed here (the schema still answers them, a 400 either way, in other words than
llama-server's): ``messages``/``input``/``tools`` structure (llama-server's explicit checks are
:mod:`.options`, :mod:`.responses_input`), an unknown ``tool_choice`` string (llama-server: 400
``Invalid tool_choice: …``), a function tool whose ``name`` is not a string (llama-server: 500
``Failed to parse tools: …``). ``/v1/completions`` and ``/completion`` are not served by this
profile (404), so they need no reading.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["cpp_int", "lenient_body", "predict_limit"]

_INT_MIN = -(2**31)
#: vLLM's ``reasoning_effort`` values (:class:`mockoss.schemas.chat.ChatCompletionRequest`).
_EFFORTS = frozenset({"minimal", "low", "medium", "high"})
#: The ``tool_choice`` strings llama-server knows (``common_chat_tool_choice_parse_oaicompat``,
#: Telosnex/fllama@1d28604d:src/llama.cpp/common/chat.cpp); others are its 400.
_CHOICES = frozenset({"auto", "none", "required"})
#: The limit fields, in llama-server's order of precedence.
_LIMITS = ("n_predict", "max_completion_tokens", "max_tokens")


def cpp_int(value: Any) -> int | None:
    """``value`` (parsed JSON) as nlohmann's ``get<int>()`` gives it, or ``None`` when that is a
    ``type_error`` (a string, array, object or ``null``: ``json_value`` then reads the default).

    A boolean is 0 or 1; an integer is taken modulo 2**32 into int32 (GCC's conversion); a float
    is truncated toward zero, and one outside int32 (or NaN, infinite) is ``-2**31``, what x86's
    ``cvttsd2si`` gives for the undefined conversion; an integer literal outside int64/uint64 is
    parsed by nlohmann as a float, so it is ``-2**31`` too.
    """
    kind = type(value)
    if kind is int and -(2**31) <= value < 2**31:
        return value  # type: ignore[no-any-return]
    if kind is not int and kind is not float and kind is not bool:
        return None
    if kind is int and not -(2**63) <= value < 2**64:  # nlohmann: a float past uint64, past int32 too
        return _INT_MIN  # (not float(value): past 1.8e308 that raises OverflowError, nlohmann's strtod gives inf)
    if kind is float:
        if math.isnan(value) or not -(2**31) <= value < 2**31:
            return _INT_MIN
        return int(value)
    return (int(value) + 2**31) % 2**32 - 2**31


def predict_limit(body: Mapping[str, Any], endpoint: str = "chat") -> int | None:
    """The number of tokens llama-server generates at most for ``body`` (a request's parsed
    JSON), ``None`` for no limit: its ``n_predict``, read as ``n_predict``, else
    ``max_completion_tokens``, else ``max_tokens`` (on ``"responses"``: ``max_output_tokens``
    when the body has that key, renamed by the converter), each as :func:`cpp_int`; -1 (the
    default) is no limit, any other value ``max(value, 1)`` (the budget is checked after a token
    is decoded, so 0 and negative values give one token), except ``-2**31`` (a value out of
    int32's range, as :func:`cpp_int` reads it): ``server_slot::has_budget``
    (Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-context.cpp:288-304) computes
    ``n_predict - n_decoded``, a signed overflow C++ leaves undefined that wraps on the x86 and
    ARM builds to a large positive budget: no limit (inferred from the code, not run).
    """
    found: int | None = None
    renamed = endpoint == "responses" and "max_output_tokens" in body
    for key in _LIMITS:
        found = cpp_int(body.get("max_output_tokens" if renamed and key == "max_tokens" else key))
        if found is not None:
            break
    if found is None or found == -1 or found == _INT_MIN:
        return None
    return max(found, 1)


def lenient_body(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as llama-server reads it, for the shared schema of ``endpoint`` (``"chat"`` or
    ``"responses"``; any other: ``body``): ``body`` itself when nothing changes, else a shallow
    copy with each field the schema would refuse or coerce, and llama-server reads as its
    default, removed, and the limit and ``n`` rewritten as llama-server reads them (module
    docstring). Old and new answers, per field:

    * ``stream``, ``include_reasoning``, ``parallel_tool_calls`` (Responses), ``store``
      (Responses): not a boolean -> absent (``"stream": "true"`` was a stream, now not).
    * ``stream_options``: not an object -> absent; its ``include_usage`` not a boolean ->
      absent (``1`` gave the usage chunk, now not).
    * ``temperature``, ``top_p``: not a number or boolean -> absent (``"hot"`` was a 400).
    * ``max_tokens``/``max_completion_tokens``/``n_predict`` (chat), ``max_output_tokens``
      (Responses): :func:`predict_limit` (``"5"`` cut at 5 tokens, now no limit; ``5.7`` and
      ``-1`` were 400s, now 5 and no limit; ``n_predict`` was ignored).
    * ``n``/``n_cmpl`` (chat): read as an int, ``n_cmpl`` first; 1 or less -> absent (``0.5``,
      ``0`` were 400s, ``"3"`` mockoss's n refusal), more -> that int (mockoss's n refusal:
      one scripted completion, where llama-server would generate that many choices).
    * ``tool_choice``: chat, not a string, or ``auto``/``none``/``required`` without ``tools``
      (vLLM's ``check_tool_usage``) -> absent; Responses, neither string nor object -> absent.
    * ``model``, ``instructions``, ``previous_response_id`` (Responses): not a string -> absent.
    * ``reasoning_effort`` (chat): not one of vLLM's values -> absent; ``reasoning``,
      ``metadata`` (objects), ``include`` (array of strings), Responses: another type -> absent.
    * ``tools`` (Responses): an item that is not a ``function`` tool and that the schema refuses
      (not an object, no string ``type``) -> removed (the converter skips it).
    """
    if endpoint == "chat":
        return _chat(body)
    if endpoint == "responses":
        return _responses(body)
    return body


_TYPE_ERROR: dict[str, tuple[type, ...]] = {
    # field: the JSON types (as parsed) that llama-server reads, or the schema takes, as given
    "model": (str,),
    "stream": (bool,),
    "temperature": (int, float, bool),
    "top_p": (int, float, bool),
}
_CHAT_TYPES = {**_TYPE_ERROR, "include_reasoning": (bool,)}
#: Responses fields llama-server reads as a string (``json_value<std::string>``) or a bool, or
#: not at all, and the JSON types the schema takes for them.
_RESPONSES_TYPES = {
    **_TYPE_ERROR,
    "instructions": (str,),
    "previous_response_id": (str,),
    "store": (bool,),
    "parallel_tool_calls": (bool,),
    "metadata": (dict,),
    "reasoning": (dict,),
}
_NULL = type(None)
#: Marks a key to remove.
_DROP = object()


def _type_errors(body: dict[str, Any], types: dict[str, tuple[type, ...]]) -> dict[str, Any]:
    """``{field: _DROP}`` for each field of ``types`` that ``body`` holds with another JSON type
    (``null`` kept: the schema and llama-server both read it as absent)."""
    get = body.get
    return {key: _DROP for key, kinds in types.items() if type(value := get(key)) not in kinds and value is not None}


def _apply(body: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    if not changes:
        return body
    out = dict(body)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _plain(value: Any) -> bool:
    """Whether the schema reads a limit ``value`` as llama-server does: absent, or an int of 1 to
    2**31-1."""
    return value is None or (type(value) is int and 0 < value < 2**31)


def _limit(body: dict[str, Any], chat: bool, changes: dict[str, Any]) -> None:
    """Make the schema read :func:`predict_limit` (``max_tokens`` on chat, with no
    ``max_completion_tokens``; ``max_output_tokens`` on Responses; absent for no limit), unless
    it already does: chat, no ``n_predict`` and plain ``max_completion_tokens``/``max_tokens``
    (the schema's ``max_completion_tokens or max_tokens`` is then llama-server's reading);
    Responses, no ``n_predict`` or ``max_completion_tokens``, a plain ``max_output_tokens``, and
    no ``max_tokens`` unless ``max_output_tokens`` replaces it."""
    get = body.get
    if get("n_predict") is None:
        if chat:
            if _plain(get("max_completion_tokens")) and _plain(get("max_tokens")):
                return
        elif (
            get("max_completion_tokens") is None
            and _plain(get("max_output_tokens"))
            and ("max_output_tokens" in body or get("max_tokens") is None)
        ):
            return
    limit = predict_limit(body, "chat" if chat else "responses")
    if chat:
        changes["max_tokens"] = _DROP if limit is None else limit
        changes["max_completion_tokens"] = _DROP
    else:
        changes["max_output_tokens"] = _DROP if limit is None else limit


def _chat(body: dict[str, Any]) -> dict[str, Any]:
    changes = _type_errors(body, _CHAT_TYPES)
    get = body.get
    options = get("stream_options")
    if options is not None:
        if type(options) is not dict:
            changes["stream_options"] = _DROP
        else:
            flags = ("include_usage", "continuous_usage_stats")
            kept = {k: v for k, v in options.items() if k not in flags or type(v) in (bool, _NULL)}
            if len(kept) != len(options):
                changes["stream_options"] = kept
    _limit(body, True, changes)
    given = get("n")
    if (given is not None and given != 1) or get("n_cmpl") is not None or given is True:
        n = cpp_int(get("n_cmpl"))
        n = cpp_int(given) if n is None else n
        if n is None or n <= 1:  # one choice: the schema's default
            changes["n"] = _DROP
        elif not (type(given) is int and given == n):
            changes["n"] = n  # more than one: mockoss's own 400 (one scripted completion)
    choice = get("tool_choice")
    if choice is not None and (type(choice) is not str or (choice in _CHOICES and get("tools") is None)):
        changes["tool_choice"] = _DROP
    if "include_reasoning" in body and get("include_reasoning") is None:
        changes["include_reasoning"] = _DROP  # the schema's bool refuses null
    effort = get("reasoning_effort")
    if effort is not None and (type(effort) is not str or effort not in _EFFORTS):
        changes["reasoning_effort"] = _DROP
    return _apply(body, changes)


def _responses(body: dict[str, Any]) -> dict[str, Any]:
    changes = _type_errors(body, _RESPONSES_TYPES)
    get = body.get
    include = get("include")
    if include is not None and not (type(include) is list and all(type(item) is str for item in include)):
        changes["include"] = _DROP
    if "tool_choice" in body and type(body["tool_choice"]) not in (str, dict):
        changes["tool_choice"] = _DROP  # the schema refuses null too
    tools = get("tools")
    if type(tools) is list and tools and not all(_schema_tool(tool) for tool in tools):
        changes["tools"] = [tool for tool in tools if _schema_tool(tool)]
    _limit(body, False, changes)
    return _apply(body, changes)


def _schema_tool(tool: Any) -> bool:
    """Whether the Responses schema takes ``tool`` (a function tool is always kept: the
    converter passes it on, and a bad one is llama-server's error too)."""
    if type(tool) is not dict:
        return False
    kind = tool.get("type")
    if kind == "function":
        return True
    return (
        type(kind) is str
        and bool(kind)
        and type(tool.get("name")) in (str, _NULL)
        and type(tool.get("server_label")) in (str, _NULL)
    )
