"""The golden cases: every scripted completion mockoss ships, and the requests each is asked with.

One list serves both sides of the comparison with real vLLM: the generators in ``tools/goldens/``
run each case through vLLM, and ``tests/golden/test_vllm_goldens.py`` runs the same case through
the emulated profile. Both sides must therefore build the case and its request bodies the same
way; everything here is a deterministic function of the shipped scenario files and fault kinds.

A :class:`Case` is one completion with a stable id:

* ``scenario-<name>-<step>``: step ``<step>`` (its position in the scenario's ``steps``, all rules
  in file order) of the shipped scenario ``<name>``; a ``pick`` step gives one case per option,
  ``scenario-<name>-<step>-<option>``; a templated completion is rendered as the scenario player
  renders it for the first request of seed 0 (Faker seed ``"0//0"``) for the case's plain chat
  body. Steps that answer a scripted error or replay recorded bytes have no completion and no
  case.
* ``fault-<kind>``: fault kind ``<kind>`` (:data:`mockoss.harmony.faults.FAULTS`), every
  parameter at its default, applied to :data:`FAULT_BASE` (an analysis message, then a
  ``get_weather`` call), which every kind applies to.

Each case expands to :func:`exchanges`: chat (``/v1/chat/completions``) and Responses
(``/v1/responses``) × streamed or not × tools declared or not (8 exchanges), plus the request
options that change what vLLM returns (``tool_choice`` ``none``/``required``, a token limit that
cuts the completion, ``include_reasoning: false``, ``reasoning_effort: high``). Exchange ids read
``<endpoint>-<stream|nostream>-<tools|notools>[-<option>]``, e.g. ``chat-stream-tools``.

The format is issue 8's (its notes describe it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.faults import FAULTS, apply_fault

__all__ = [
    "CHAT",
    "FAULT_BASE",
    "MODEL",
    "RESPONSES",
    "TOOL_CATALOGUE",
    "USER_MESSAGE",
    "Case",
    "Exchange",
    "all_cases",
    "case_by_id",
    "exchanges",
]

#: The model name every request names (what ``vllm serve --served-model-name`` is given).
MODEL = "openai/gpt-oss-20b"
#: The one user turn of every request.
USER_MESSAGE = "What is the weather in Paris? Use a tool if you have one."
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"

_OBJECT = {"type": "object", "properties": {}, "additionalProperties": True}


def _params(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


#: The fixed function tool set: name → (description, JSON Schema of the arguments). A case
#: declares the functions its completion addresses (``to=functions.NAME``); a name missing here is
#: declared with an open object schema; a completion addressing none declares ``get_weather``.
TOOL_CATALOGUE: Mapping[str, tuple[str, dict[str, Any]]] = {
    "get_weather": ("Current weather for a location.", _params(location="string")),
    "bash": ("Run a shell command.", _params(cmd="array")),
    "terminal": ("Run a terminal command.", _params(command="string")),
    "shell": ("Run a shell command.", _params(command="string")),
    "read_file": ("Read a file.", _params(path="string")),
    "write_file": ("Write a file.", _params(path="string", content="string")),
    "view": ("View a file.", _params(path="string")),
    "search": ("Search the web.", _params(query="string")),
    "web-browsing": ("Browse the web.", _params(query="string")),
    "x": ("A tool named x.", _OBJECT),
}
DEFAULT_TOOLS = ("get_weather",)
_FUNCTION = re.compile(r"to=functions\.([A-Za-z0-9_-]+)")


def _message(channel: str, content: str, recipient: str | None = None, content_type: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content).with_channel(channel)
    if recipient is not None:
        message = message.with_recipient(recipient)
    if content_type is not None:
        message = message.with_content_type(content_type)
    return message


#: What each fault kind is applied to: the clean tool call every kind can edit.
FAULT_BASE: tuple[Message, ...] = (
    _message("analysis", "The user asks for the weather in Paris. Call get_weather."),
    _message("commentary", '{"location":"Paris"}', "functions.get_weather", "<|constrain|>json"),
)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request of a case.

    Attributes:
        id: stable id within the case, e.g. ``chat-stream-tools``.
        endpoint: the path, :data:`CHAT` or :data:`RESPONSES`.
        stream: whether the request asks for a stream.
        request: the JSON body exactly as the client sends it (no side channel).
    """

    id: str
    endpoint: str
    stream: bool
    request: dict[str, Any]

    @property
    def kind(self) -> str:
        """``chat`` or ``responses``: the short endpoint name (mockoss's ``Endpoint``)."""
        return "chat" if self.endpoint == CHAT else "responses"


@dataclass(frozen=True, slots=True)
class Case:
    """One scripted completion and where it comes from.

    Attributes:
        id: ``scenario-<name>-<step>[-<option>]`` or ``fault-<kind>``.
        origin: human-readable source, e.g. ``mockoss:scenarios/clean-tool-call.yaml step 0``.
        completion: the completion (text and o200k_harmony token ids).
        tools: the function names the "tools" exchanges declare, sorted.
    """

    id: str
    origin: str
    completion: Completion
    tools: tuple[str, ...]


def called_functions(text: str) -> tuple[str, ...]:
    """Function names a completion addresses (``to=functions.NAME``), sorted, or :data:`DEFAULT_TOOLS`."""
    return tuple(sorted(set(_FUNCTION.findall(text)))) or DEFAULT_TOOLS


def _case(case_id: str, origin: str, completion: Completion) -> Case:
    return Case(case_id, origin, completion, called_functions(completion.text))


def _scenario_cases(name: str) -> Iterator[Case]:
    from mockoss.scenario.loader import load_scenario
    from mockoss.scenario.template import RenderContext

    scenario = load_scenario(name)
    ctx_body = _chat_body((), stream=False)
    for position, step in enumerate(scenario.steps):
        answers = [(None, step)] if not step.options else [(i, option) for i, (_, option) in enumerate(step.options)]
        for option, answer in answers:
            completion = answer.completion
            if completion is None and answer.template is not None:
                completion = answer.template.render(RenderContext(ctx_body, MODEL, "0//0"))
            if completion is None:  # a scripted error or a replay: nothing for vLLM to surface
                continue
            suffix = f"-{option}" if option is not None else ""
            where = f"{scenario.origin} step {position}" + (f" pick option {option}" if option is not None else "")
            yield _case(f"scenario-{name}-{position}{suffix}", where, completion)


def _fault_case(kind: str) -> Case:
    text = apply_fault(FAULT_BASE, {"kind": kind})
    return _case(f"fault-{kind}", f"mockoss.harmony.faults {kind} (defaults) on FAULT_BASE", Completion.from_text(text))


@cache
def all_cases() -> tuple[Case, ...]:
    """Every case: shipped scenarios in name order, then fault kinds in registry order.

    Raises:
        ValueError: two cases got the same id (a scenario name would have to end like a step).
    """
    from mockoss.scenario.loader import builtin_names

    cases = [case for name in builtin_names() for case in _scenario_cases(name)]
    cases.extend(_fault_case(kind) for kind in FAULTS)
    ids = [case.id for case in cases]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate golden case ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(cases)


def case_by_id(case_id: str) -> Case:
    """The case named ``case_id``.

    Raises:
        KeyError: no such case (the message lists how many cases exist).
    """
    for case in all_cases():
        if case.id == case_id:
            return case
    raise KeyError(f"no golden case {case_id!r} among {len(all_cases())} cases")


def _tool_definition(name: str, *, chat: bool) -> dict[str, Any]:
    description, parameters = TOOL_CATALOGUE.get(name, (f"The {name} tool.", _OBJECT))
    function = {"name": name, "description": description, "parameters": parameters}
    return {"type": "function", "function": function} if chat else {"type": "function", **function}


def _chat_body(tools: tuple[str, ...], *, stream: bool, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": USER_MESSAGE}]}
    if tools:
        body["tools"] = [_tool_definition(name, chat=True) for name in tools]
    body.update(options)
    if stream:
        body["stream"] = True
    return body


def _responses_body(tools: tuple[str, ...], *, stream: bool, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "input": USER_MESSAGE}
    if tools:
        body["tools"] = [_tool_definition(name, chat=False) for name in tools]
    body.update(options)
    if stream:
        body["stream"] = True
    return body


def cut_point(case: Case) -> int:
    """The token limit of the ``max-tokens`` exchanges: half the completion, at least 1 token."""
    return max(1, len(case.completion.tokens) // 2)


def exchanges(case: Case) -> tuple[Exchange, ...]:
    """The requests ``case`` is asked with, in a fixed order (the 8-exchange matrix, then options)."""
    out = []
    for kind, path, build in (("chat", CHAT, _chat_body), ("responses", RESPONSES, _responses_body)):
        for stream in (False, True):
            for with_tools in (False, True):
                tools = case.tools if with_tools else ()
                ident = f"{kind}-{'stream' if stream else 'nostream'}-{'tools' if with_tools else 'notools'}"
                out.append(Exchange(ident, path, stream, build(tools, stream=stream)))
    limit = cut_point(case)
    extra = (
        ("chat-nostream-tools-choice-none", CHAT, _chat_body(case.tools, stream=False, tool_choice="none")),
        ("chat-nostream-tools-choice-required", CHAT, _chat_body(case.tools, stream=False, tool_choice="required")),
        ("chat-nostream-notools-max-tokens", CHAT, _chat_body((), stream=False, max_tokens=limit)),
        ("chat-nostream-notools-no-reasoning", CHAT, _chat_body((), stream=False, include_reasoning=False)),
        ("chat-nostream-notools-effort-high", CHAT, _chat_body((), stream=False, reasoning_effort="high")),
        ("responses-nostream-notools-max-tokens", RESPONSES, _responses_body((), stream=False, max_output_tokens=limit)),
    )
    out.extend(Exchange(ident, path, False, body) for ident, path, body in extra)
    return tuple(out)
