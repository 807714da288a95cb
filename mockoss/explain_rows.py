"""The rows of ``mockoss explain``: each profile's reply to each scripted step, as an :class:`Outcome`.

Split from :mod:`mockoss.explain` (the command: reading the scenario, the flags, printing). For every
scripted step, every registered profile (:data:`mockoss.profiles.registry.PROFILES`, whatever is
registered) and every generation endpoint among ``chat`` and ``responses`` that the profile serves,
a non-streamed request is surfaced twice, once declaring function tools and once without tools,
through the profile's own ``surface`` (the same code path the HTTP server runs). Each reply is
summarised as an :class:`Outcome`: HTTP status, output item or message types, content, reasoning,
tool calls (name + arguments) and the error message; :func:`render_table` prints them all.

A step of a rule with a ``match`` block is surfaced with requests that rule answers
(:func:`mockoss.explain_request.matched_request`: ``tool_choice``, ``model``, ``tool_names``, the
conversation fields and headers the match names); a variant no request of which the rule answers
(``tools: true`` without tools, another ``endpoint``, ``stream: true``) is one row with profile
``-``, status 0 and ``error`` saying why it was not sent.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockoss.endpoints import ENDPOINTS, prompt_tokens
from mockoss.explain_request import matched_request
from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, Profile, RequestContext
from mockoss.profiles.registry import PROFILES, get_profile, switch_names

__all__ = [
    "COLUMNS",
    "EXPLAINED_ENDPOINTS",
    "Outcome",
    "explain",
    "render_table",
    "request_body",
    "summarise",
    "tool_names_for",
]

MODEL = "openai/gpt-oss-20b"
CREATED = 1767225600
EXPLAINED_ENDPOINTS = ("chat", "responses")
_FUNCTION_RECIPIENT = re.compile(r"to=functions\.([A-Za-z0-9_\-]+)")
_PARAMETERS = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class Outcome:
    """One row: what a client of ``profile`` receives for one step, endpoint and tools variant.

    Attributes:
        step: scripted step index.
        profile: registry name.
        endpoint: ``"chat"`` or ``"responses"``.
        tools: ``"tools"`` (function tools declared) or ``"no-tools"``.
        status: HTTP status.
        items: Responses output item types, or ``["message"]`` for a chat message.
        content: chat ``content`` / joined ``output_text``, else ``None``.
        reasoning: chat ``reasoning`` (or ``reasoning_content``) / joined reasoning text.
        tool_calls: ``[{"type", "name", "arguments"}]`` (function calls and MCP calls).
        error: the error message of a non-2xx reply, else ``None``.
        answer: which answer of the step this row shows when it has several (``pick 2/4, weight
            4``) or was rendered from a template; else ``None``.
        rule: the scenario rule the step belongs to (``rule 'leak'``, ``rule #2``), ``None`` for a
            ``steps:`` file or a completion on stdin.
        request: what the request carries to meet the rule's ``match`` beyond the minimal body
            (``tool_choice=none``), else ``None``.
    """

    step: int
    profile: str
    endpoint: str
    tools: str
    status: int
    items: list[str] = field(default_factory=list)
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    answer: str | None = None
    rule: str | None = None
    request: str | None = None


def tool_names_for(completion: Completion, requested: Sequence[str] | None) -> list[str]:
    """Function tools to declare: ``requested``, else the ``functions.X`` recipients the
    completion addresses, else ``["lookup"]``."""
    if requested:
        return list(requested)
    found = list(dict.fromkeys(_FUNCTION_RECIPIENT.findall(completion.text)))
    return found or ["lookup"]


def request_body(endpoint: str, tools: Sequence[str]) -> dict[str, Any]:
    """A minimal non-streamed request body for ``endpoint`` declaring ``tools``."""
    if endpoint == "chat":
        body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}
        if tools:
            # A description: SGLang's gpt-oss chat template refuses a tool without one (tool_description_required).
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": n, "description": f"The {n} tool.", "parameters": _PARAMETERS},
                }
                for n in tools
            ]
        return body
    body = {"model": MODEL, "input": "Hi"}
    if tools:
        body["tools"] = [
            {"type": "function", "name": n, "description": f"The {n} tool.", "parameters": _PARAMETERS} for n in tools
        ]
    return body


def _error_message(data: Any) -> str:
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping) and "message" in error:
            return str(error["message"])
        if isinstance(error, str):
            return error
        for key in ("message", "detail"):
            if key in data:
                return str(data[key])
    return json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data


def _calls_from_chat(message: Mapping[str, Any]) -> list[dict[str, str]]:
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append({"type": "function", "name": str(function.get("name")), "arguments": arguments})
    return calls


def summarise(step: int, profile: str, endpoint: str, tools: str, status: int, body: bytes) -> Outcome:
    """Turn a non-streamed reply body into an :class:`Outcome` (OpenAI chat / Responses shapes)."""
    try:
        data: Any = json.loads(body) if body else None
    except ValueError:
        data = body.decode("utf-8", "replace")
    if status >= 400 or not isinstance(data, Mapping):
        return Outcome(step, profile, endpoint, tools, status, error=_error_message(data))
    if endpoint == "chat":
        choices = data.get("choices") or [{}]
        message = choices[0].get("message") or {}
        reasoning = message.get("reasoning", message.get("reasoning_content"))
        return Outcome(
            step,
            profile,
            endpoint,
            tools,
            status,
            ["message"],
            message.get("content"),
            reasoning,
            _calls_from_chat(message),
        )
    items, content, reasoning, calls = [], [], [], []
    for item in data.get("output") or ():
        kind = item.get("type")
        items.append(str(kind))
        if kind == "message":
            content += [p.get("text", "") for p in item.get("content") or () if p.get("type") == "output_text"]
        elif kind == "reasoning":
            reasoning += [p.get("text", "") for p in item.get("content") or ()]
            reasoning += [p.get("text", "") for p in item.get("summary") or ()]
        elif kind in ("function_call", "mcp_call"):
            calls.append({"type": kind, "name": str(item.get("name")), "arguments": str(item.get("arguments"))})
    return Outcome(
        step,
        profile,
        endpoint,
        tools,
        status,
        items,
        "\n".join(content) if content else None,
        "\n".join(reasoning) if reasoning else None,
        calls,
    )


def _surface(
    profile: Profile, endpoint: str, completion: Completion, body: dict[str, Any], index: int
) -> tuple[int, bytes]:
    spec = ENDPOINTS[endpoint]
    raw = json.dumps(body).encode()
    request = spec.schema.model_validate(body)
    view = request.view(MODEL, body)  # type: ignore[attr-defined]
    ctx = RequestContext(ids=IdSource(0, index), created=CREATED, prompt_tokens=prompt_tokens(endpoint, raw))
    reply = profile.surface(endpoint, completion, view, ctx)
    if reply.streamed:
        return reply.status, b"".join(reply.frames)
    return reply.status, reply.body


def explain(
    steps: Iterable[tuple[Any, ...]],
    *,
    endpoints: Sequence[str] = EXPLAINED_ENDPOINTS,
    tools: Sequence[str] | None = None,
    switches: Mapping[str, Any] | None = None,
    profiles: Mapping[str, Profile] | None = None,
) -> list[Outcome]:
    """Surface every step with every profile; see the module docstring.

    Args:
        steps: ``(index, completion, scripted_error[, answer label[, rule label[, match]]])``; a
            scripted error ``(status, message)`` is shown as each profile's error body; ``match``
            the rule's :class:`~mockoss.scenario.match_spec.MatchSpec` (``None``: any request).
        endpoints: a subset of ``("chat", "responses")``.
        tools: function tool names to declare (default: inferred, see :func:`tool_names_for`).
        switches: applied to each profile that has them.
        profiles: defaults to the registry.
    """
    registry = PROFILES if profiles is None else profiles
    rows: list[Outcome] = []
    for entry in steps:
        index, completion, scripted = entry[:3]
        answer = entry[3] if len(entry) > 3 else None
        rule = entry[4] if len(entry) > 4 else None
        spec = entry[5] if len(entry) > 5 else None
        if completion is None and scripted is None:  # nothing a profile can surface
            rows.append(Outcome(index, "-", "-", "-", 0, error=answer, answer=answer, rule=rule))
            continue
        start = len(rows)
        variants: dict[tuple[str, str], tuple[dict[str, Any], str | None, list[str]]] = {}
        if completion is not None:
            declared = tool_names_for(completion, tools)
            for endpoint in endpoints:
                for label, names in (("tools", declared), ("no-tools", [])):
                    body, _headers, note, unmet = matched_request(
                        endpoint, request_body(endpoint, names), spec, served_model=MODEL
                    )
                    variants[(endpoint, label)] = (body, note, unmet)
        served: set[tuple[str, str]] = set()
        for name, base in registry.items():
            own = {k: v for k, v in (switches or {}).items() if k in switch_names(base)}
            profile = get_profile(name, own, warn=False) if own and profiles is None else base
            for endpoint in endpoints:
                if endpoint not in profile.endpoints:
                    continue
                if scripted is not None:
                    reply = profile.error(*scripted)
                    rows.append(_with_answer(summarise(index, name, endpoint, "-", reply.status, reply.body), answer))
                    continue
                assert completion is not None
                for label in ("tools", "no-tools"):
                    body, note, unmet = variants[(endpoint, label)]
                    served.add((endpoint, label))
                    if unmet:
                        continue
                    try:
                        status, reply_body = _surface(profile, endpoint, completion, body, index)
                    except Exception as exc:  # noqa: BLE001  # another profile's bug must not hide the others
                        rows.append(
                            Outcome(
                                index,
                                name,
                                endpoint,
                                label,
                                0,
                                error=f"mockoss: {type(exc).__name__}: {exc}",
                                answer=answer,
                                request=note,
                            )
                        )
                        continue
                    row = summarise(index, name, endpoint, label, status, reply_body)
                    rows.append(_with_answer(dataclasses.replace(row, request=note) if note else row, answer))
        for (endpoint, label), (_body, note, unmet) in variants.items():
            if unmet and (endpoint, label) in served:
                why = "not sent: the rule answers no such request (" + "; ".join(unmet) + ")"
                rows.append(Outcome(index, "-", endpoint, label, 0, error=why, answer=answer, request=note))
        if rule is not None:
            rows[start:] = [dataclasses.replace(r, rule=rule) for r in rows[start:]]
    return rows


def _with_answer(row: Outcome, answer: str | None) -> Outcome:
    return row if answer is None else dataclasses.replace(row, answer=answer)


def _cell(value: Any, width: int = 40) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            value = "; ".join(f"{c['name']}({c['arguments']})" for c in value)
        else:
            value = ",".join(map(str, value))
    text = str(value).replace("\n", "⏎")
    return text if len(text) <= width else text[: width - 1] + "…"


COLUMNS = ("step", "profile", "endpoint", "tools", "status", "items", "content", "reasoning", "tool_calls", "error")


def render_table(rows: Sequence[Outcome]) -> str:
    """An aligned text table, one line per :class:`Outcome`; a ``request`` column after ``tools``
    when a row's request carries something for its rule's ``match``."""

    def step_cell(r: Outcome) -> str:
        return str(r.step) if r.answer is None else f"{r.step} ({r.answer})"

    columns = list(COLUMNS)
    if any(r.request for r in rows):
        columns.insert(columns.index("tools") + 1, "request")
    cells = [columns] + [[step_cell(r) if c == "step" else _cell(getattr(r, c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells)
