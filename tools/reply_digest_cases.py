"""The request grid of ``tools/reply_digests.py``: the bodies sent, the cases' keys and sessions,
the long-answer scenario. Its module docstring describes the grid; this module builds it and
sends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

#: Values of the request's completion-token limit; ``None``: the field is left out.
MAX_TOKENS: tuple[int | None, ...] = (None, 1, 7, 64)
#: The quick grid's limits and scenarios (``--quick``).
QUICK_MAX_TOKENS: tuple[int | None, ...] = (None, 7)
QUICK_SCENARIOS = (
    "clean-answer",
    "clean-tool-call",
    "tool-arguments-not-json",
    "reasoning-cut-off-by-max-tokens",
    "doubled-role-unknown-role-error",
)
#: The long answer's limits: none, and one cutting it short.
LONG_MAX_TOKENS: tuple[int | None, ...] = (None, 1500)
SEED = 12345
PROMPT = "What is the weather in Paris? Use the tools if needed."
TOOL_PARAMETERS = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
COMMAND_PARAMETERS = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
_TOOLS = (
    ("get_weather", "Weather of a city", TOOL_PARAMETERS),
    ("terminal", "Run a shell command", COMMAND_PARAMETERS),
)
CHAT_TOOLS = [{"type": "function", "function": {"name": n, "description": d, "parameters": p}} for n, d, p in _TOOLS]
RESPONSES_TOOLS = [{"type": "function", "name": n, "description": d, "parameters": p} for n, d, p in _TOOLS]


@dataclass(frozen=True)
class Case:
    """One request of the grid. ``key``: ``endpoint|tools=0/1|stream=0/1|max_tokens=N/none|send=1/2`` (the
    output prefixes ``scenario|profile|``); ``session``: its ``X-Mockoss-Session`` (the key less ``send``)."""

    key: str
    path: str
    body: bytes
    session: str


#: Endpoints whose bodies may declare tools: each case is sent with and without them.
TOOL_ENDPOINTS = frozenset({"chat", "lmstudio.chat", "responses", "ollama.chat"})


def request_body(
    endpoint: str, model: str, stream: bool, max_tokens: int | None, extra: dict[str, Any], tools: bool = True
) -> dict[str, Any]:
    """A small valid body for ``endpoint`` (a name of :data:`mockoss.endpoints.ENDPOINTS`).

    ``tools``: declare :data:`CHAT_TOOLS` (:data:`RESPONSES_TOOLS` on Responses) where the
    endpoint takes them (:data:`TOOL_ENDPOINTS`). ``extra``: scalar fields a scenario's rule
    matches on (``tool_choice``), merged into those endpoints' bodies. Raises ``KeyError`` for an
    unknown endpoint name.
    """
    messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": PROMPT}]
    limit_field = "max_tokens"
    if endpoint in ("chat", "lmstudio.chat", "ollama.chat"):
        body: dict[str, Any] = {"model": model, "messages": messages}
    elif endpoint in ("completions", "lmstudio.completions", "ollama.generate"):
        body = {"model": model, "prompt": PROMPT}
    elif endpoint == "responses":
        body, limit_field = {"model": model, "input": PROMPT}, "max_output_tokens"
    else:
        raise KeyError(endpoint)
    if endpoint in TOOL_ENDPOINTS:
        if tools:
            body["tools"] = RESPONSES_TOOLS if endpoint == "responses" else CHAT_TOOLS
        body.update(extra)
    body["stream"] = stream
    if max_tokens is not None:
        if endpoint.startswith("ollama."):
            body["options"] = {"num_predict": max_tokens}
        else:
            body[limit_field] = max_tokens
    return body


def match_fields(name: str) -> dict[str, Any]:
    """The scalar fields the first matching rule of shipped scenario ``name`` asks for, else ``{}``."""
    from mockoss.scenario.loader import builtin_dir

    data = yaml.safe_load(builtin_dir().joinpath(f"{name}.yaml").read_text(encoding="utf-8"))
    for rule in data.get("rules") or ():
        match = rule.get("match")
        if isinstance(match, dict) and all(isinstance(v, (str, int, float, bool)) for v in match.values()):
            return dict(match)
    return {}


def long_scenario() -> Any:
    """A scenario with one step: a short analysis, then a final answer of about 2,000 o200k tokens
    (``n. alpha beta gamma delta.`` for n = 1..250: 1,999 tokens of o200k_harmony, which
    ``tests/test_reply_digests.py`` counts)."""
    from mockoss.scenario.loader import scenario_from_data

    data = {
        "steps": [
            {
                "completion": {
                    "messages": [
                        {"channel": "analysis", "content": "Answer at length."},
                        {"channel": "final", "content": long_text()},
                    ]
                }
            }
        ]
    }
    return scenario_from_data(data, name="long-answer", default_version=True)


def long_text() -> str:
    """The long final answer's text (deterministic)."""
    return " ".join(f"{n}. alpha beta gamma delta." for n in range(1, 251))


def grid_cases(
    scenario: str, profile: Any, limits: Sequence[int | None], extra: dict[str, Any], endpoints: Sequence[str]
) -> Iterator[Case]:
    from mockoss.endpoints import ENDPOINTS

    for endpoint in endpoints:
        for tools in (True, False) if endpoint in TOOL_ENDPOINTS else (False,):
            for stream in (False, True):
                for limit in limits:
                    raw = json.dumps(
                        request_body(endpoint, profile.default_model, stream, limit, extra, tools)
                    ).encode()
                    case = f"{endpoint}|tools={int(tools)}|stream={int(stream)}|max_tokens={'none' if limit is None else limit}"
                    for send in (1, 2):
                        yield Case(f"{case}|send={send}", ENDPOINTS[endpoint].path, raw, case)
