"""The request ``mockoss explain`` sends for one variant, made to satisfy the rule's ``match``.

A scenario rule answers only the requests its ``match`` block accepts
(:mod:`mockoss.scenario.match_spec`, checked by :mod:`mockoss.scenario.matching`). Until the
eighteenth session explain sent the same minimal body for every rule, so a rule with ``match:
{tool_choice: none}`` was shown answering a request without ``tool_choice`` (one it would never
answer; vLLM then returned the call its ``tool_choice_none`` switch drops for ``"none"``).
:func:`matched_request` starts from :func:`mockoss.explain_rows.request_body` and adds what each
given match field names:

* ``model``: the name (the first of a list; a sample string for ``{regex: …}``);
* ``tool_names``: declared too (tools variant); ``tool_choice``: the mode, or a named choice
  (``{"type": "function", "function": {"name": N}}`` for chat, ``{"type": "function", "name": N}``
  for Responses);
* ``turn`` (the smallest turn allowed), ``role``, ``last_user``, ``last_tool``, ``last_message``:
  earlier assistant turns, a tool call with its result, message texts sampled from the regex;
* ``headers``: a value sampled from each regex (recorded: a profile's reply does not read them).

The result is checked with the rule's own compiled matcher on the same
:class:`~mockoss.scenario.conversation.RequestFacts` the server builds; a variant it still fails
(``endpoint`` not this one, ``tools: true`` in the no-tools variant, ``stream: true`` since explain
shows non-streamed replies, a regex no sample satisfies) is returned with the matcher's reasons and
is not sent: the table says so instead of showing a reply the rule would never give.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.match_spec import MatchSpec, ModelRegex, TurnRange
from mockoss.scenario.matching import compile_match
from mockoss.scenario.pattern import compile_search

__all__ = ["matched_request", "sample_text"]

_MODES = ("auto", "none", "required")
_CATEGORY = {"CATEGORY_DIGIT": "0", "CATEGORY_NOT_DIGIT": "a", "CATEGORY_SPACE": " ", "CATEGORY_NOT_SPACE": "a",
             "CATEGORY_WORD": "a", "CATEGORY_NOT_WORD": " "}  # fmt: skip
_CANDIDATES = "aA0 x_-.:/"


def _chars(items: list[Any], negate: bool) -> str | None:
    """One character an ``IN`` set (``[…]``) accepts."""
    if not negate:
        for op, arg in items:
            if str(op) == "LITERAL":
                return chr(arg)
            if str(op) == "RANGE":
                return chr(arg[0])
            if str(op) == "CATEGORY":
                return _CATEGORY.get(str(arg))
        return None
    for c in _CANDIDATES:
        if not _in_set(items, c):
            return c
    return None


def _in_set(items: list[Any], c: str) -> bool:
    for op, arg in items:
        name = str(op)
        if (name == "LITERAL" and chr(arg) == c) or (name == "RANGE" and arg[0] <= ord(c) <= arg[1]):
            return True
        if name == "CATEGORY" and re.fullmatch({"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
                                                  "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w",
                                                  "CATEGORY_NOT_WORD": r"\W"}.get(str(arg), r"(?!)"), c):  # fmt: skip
            return True
    return False


def _walk(tree: Any) -> str | None:
    out: list[str] = []
    for op, arg in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("x")
        elif name == "IN":
            negate = bool(arg) and str(arg[0][0]) == "NEGATE"
            c = _chars(arg[1:] if negate else arg, negate)
            if c is None:
                return None
            out.append(c)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = arg
            part = _walk(sub)
            if part is None:
                return None
            out.append(part * low)
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            part = _walk(arg[-1])
            if part is None:
                return None
            out.append(part)
        elif name == "BRANCH":
            part = _walk(arg[1][0])
            if part is None:
                return None
            out.append(part)
        elif name == "AT":
            continue
        else:  # a backreference or lookaround (RE2 refuses them when the file loads)
            return None
    return "".join(out)


def sample_text(pattern: str, preferred: str = "Hi") -> str | None:
    """A text ``pattern`` (a scenario regex: searched, run by RE2) matches: ``preferred`` when it
    already does, else one built from the pattern's parse tree (each repeat its minimum, each
    alternation its first branch, each class its first member), else ``None``.

    Checked with :func:`mockoss.scenario.pattern.compile_search`, the rule's own search."""
    found = compile_search(pattern)
    if found(preferred):
        return preferred
    try:
        import re._parser as sre_parse  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.10
        import sre_parse  # type: ignore[no-redef]
    try:
        text = _walk(sre_parse.parse(pattern))
    except (re.error, RecursionError, TypeError, ValueError, IndexError):
        return None
    for candidate in (text, preferred + (text or "")):
        if candidate is not None and found(candidate):
            return candidate
    return None


def _turn_needed(value: int | list[int] | TurnRange | None) -> int:
    if value is None:
        return 1
    if isinstance(value, TurnRange):
        return value.min or 1
    return value if isinstance(value, int) else min(value)


def _named_choice(endpoint: str, name: str) -> dict[str, Any]:
    if endpoint == "chat":
        return {"type": "function", "function": {"name": name}}
    return {"type": "function", "name": name}


def _conversation(endpoint: str, spec: MatchSpec, tools: Sequence[str], notes: list[str]) -> list[Any] | None:
    """The messages (chat) or input items (Responses) the spec's conversation fields ask for, else
    ``None`` (the plain one-message request)."""
    turn = _turn_needed(spec.turn)
    wants_tool = spec.last_tool is not None or spec.role == "tool"
    if (
        turn == 1
        and not wants_tool
        and spec.role in (None, "user")
        and spec.last_user is None
        and spec.last_message is None
    ):
        return None
    user = sample_text(spec.last_user) if spec.last_user is not None else "Hi"
    tool_text = sample_text(spec.last_tool, "ok") if spec.last_tool is not None else "ok"
    if user is None or tool_text is None:
        return []  # the matcher names the regex
    chat = endpoint == "chat"
    items: list[Any] = []
    earlier = turn - 1 - (1 if wants_tool else 0)
    for _ in range(max(earlier, 0)):
        items.append({"role": "user", "content": "Hi"})
        items.append({"role": "assistant", "content": "Hello."} if chat else
                     {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]})  # fmt: skip
    items.append({"role": "user", "content": user})
    if wants_tool:
        name = tools[0] if tools else "lookup"
        if chat:
            call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": "{}"}}
            items.append({"role": "assistant", "content": None, "tool_calls": [call]})
            items.append({"role": "tool", "tool_call_id": "call_0", "content": tool_text})
        else:
            items.append({"type": "function_call", "call_id": "call_0", "name": name, "arguments": "{}"})
            items.append({"type": "function_call_output", "call_id": "call_0", "output": tool_text})
        notes.append(f"a {name} call and its result")
    if spec.role in ("system", "developer", "assistant"):
        items.append({"role": spec.role, "content": "Hi"})
    if spec.last_message is not None:
        last = items[-1]
        key = "output" if "output" in last else "content"
        text = sample_text(spec.last_message, str(last.get(key) or "Hi"))
        if text is None:
            return []
        last[key] = text
    if turn > 1:
        notes.append(f"turn {turn}")
    return items


def matched_request(
    endpoint: str,
    body: Mapping[str, Any],
    spec: MatchSpec | None,
    *,
    served_model: str,
) -> tuple[dict[str, Any], dict[str, str], str | None, list[str]]:
    """``body`` (:func:`mockoss.explain_rows.request_body`'s, for ``endpoint`` and one tools
    variant) changed to meet ``spec``; see the module docstring.

    Returns:
        ``(body, headers, note, unmet)``: the body to send; the headers the rule asks for (lower-case
        names); a short note of what was added (``tool_choice=none``), ``None`` when nothing was;
        the matcher's reasons the request still fails (``[]``: the rule answers it).
    """
    out: dict[str, Any] = dict(body)
    if spec is None:
        return out, {}, None, []
    notes: list[str] = []
    tools = [t["function"]["name"] if "function" in t else t["name"] for t in out.get("tools") or ()]
    if spec.tool_names and tools:
        extra = [n for n in spec.tool_names if n not in tools]
        if extra:
            template = out["tools"][0]
            added = [{**template, "function": {**template["function"], "name": n, "description": f"The {n} tool."}}
                     if "function" in template else {**template, "name": n, "description": f"The {n} tool."}
                     for n in extra]  # fmt: skip
            out["tools"] = [*out["tools"], *added]
            tools += extra
            notes.append("tools " + ",".join(extra))
    if spec.model is not None:
        if isinstance(spec.model, ModelRegex):
            name = sample_text(spec.model.regex, served_model)
        else:
            name = spec.model if isinstance(spec.model, str) else spec.model[0]
        if name is not None and name != out.get("model"):
            out["model"] = name
            notes.append(f"model={name}")
    if spec.tool_choice is not None:
        facts = RequestFacts(endpoint, out, {}, str(out.get("model") or served_model))
        mode = spec.tool_choice
        if mode in _MODES:
            if facts.tool_choice[0] != mode:
                out["tool_choice"] = mode
                notes.append(f"tool_choice={mode}")
        elif tools:
            name = tools[0] if mode == "named" else mode
            out["tool_choice"] = _named_choice(endpoint, name)
            notes.append(f"tool_choice={name}")
    conversation = _conversation(endpoint, spec, tools, notes)
    if conversation is not None:
        out["messages" if endpoint == "chat" else "input"] = conversation
    headers: dict[str, str] = {}
    for name, pattern in (spec.headers or {}).items():
        value = sample_text(pattern, "x")
        if value is not None:
            headers[name.lower()] = value
            notes.append(f"{name}: {value}")
    facts = RequestFacts(endpoint, out, headers, str(out.get("model") or served_model))
    unmet = compile_match(spec).failures(facts)
    return out, headers, "; ".join(notes) or None, unmet
