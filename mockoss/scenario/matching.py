"""Compiled rule matchers: a :class:`~mockoss.scenario.match_spec.MatchSpec` turned into checks.

Regexes are compiled once, when the scenario loads, by RE2 (:mod:`mockoss.scenario.pattern`:
linear in the text, so no pattern can stall the server); a request costs one cheap test per given
field. Each check can also say, in one short phrase, why a request failed it, for the error a
request gets when no rule matches (``turn 3 not in [1]``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.match_spec import MatchSpec, ModelRegex, TurnRange
from mockoss.scenario.pattern import compile_search

__all__ = ["Check", "Matcher", "compile_match"]

MODES = ("auto", "none", "required", "named")


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


@dataclass(frozen=True, slots=True)
class Check:
    """One condition: ``test(facts)`` is true when it holds; ``explain(facts)`` says why not."""

    field: str
    test: Callable[[RequestFacts], bool]
    explain: Callable[[RequestFacts], str]


@dataclass(frozen=True, slots=True)
class Matcher:
    """All of a rule's conditions; no checks means every request matches."""

    checks: tuple[Check, ...] = ()

    def __call__(self, facts: RequestFacts) -> bool:
        for check in self.checks:
            if not check.test(facts):
                return False
        return True

    def failures(self, facts: RequestFacts) -> list[str]:
        """Why ``facts`` fails, one phrase per failed condition, in field order."""
        return [check.explain(facts) for check in self.checks if not check.test(facts)]


def _endpoint(value: str | list[str]) -> Check:
    names = frozenset([value] if isinstance(value, str) else value)
    shown = ", ".join(sorted(names))
    return Check("endpoint", lambda f: f.endpoint in names, lambda f: f"endpoint {f.endpoint} not in [{shown}]")


def _model(value: str | list[str] | ModelRegex) -> Check:
    if isinstance(value, ModelRegex):
        found = compile_search(value.regex)
        return Check(
            "model",
            lambda f: found(f.model),
            lambda f: f"model {f.model!r} does not match /{value.regex}/",
        )
    names = frozenset([value] if isinstance(value, str) else value)
    shown = ", ".join(repr(n) for n in sorted(names))
    return Check("model", lambda f: f.model in names, lambda f: f"model {f.model!r} not in [{shown}]")


def _tools(wanted: bool) -> Check:
    def explain(f: RequestFacts) -> str:
        if wanted:
            return "no tools declared"
        return "tools declared (" + ", ".join(sorted(f.tool_names)) + ")"

    return Check("tools", lambda f: f.declares_tools == wanted, explain)


def streams(endpoint: str, body: Mapping[str, Any]) -> bool:
    """Whether a request to ``endpoint`` (an :data:`mockoss.endpoints.ENDPOINTS` name) with the
    parsed ``body`` asks for a stream: ``"stream": true``; Ollama's native routes stream unless
    ``"stream": false`` (:class:`mockoss.schemas.ollama.OllamaChatRequest`)."""
    stream = body.get("stream")
    return stream is not False if endpoint.startswith("ollama.") else stream is True


def _stream(wanted: bool) -> Check:
    def explain(f: RequestFacts) -> str:
        return "a streamed request" if not wanted else "not a streamed request"

    return Check("stream", lambda f: streams(f.endpoint, f.body) == wanted, explain)


def _tool_names(names: list[str]) -> Check:
    needed = frozenset(names)

    def explain(f: RequestFacts) -> str:
        missing = ", ".join(sorted(needed - f.tool_names))
        declared = ", ".join(sorted(f.tool_names)) or "none"
        return f"tools not declared: {missing} (declared: {declared})"

    return Check("tool_names", lambda f: needed <= f.tool_names, explain)


def _tool_choice(wanted: str) -> Check:
    if wanted in MODES:
        test: Callable[[RequestFacts], bool] = lambda f: f.tool_choice[0] == wanted
    else:
        test = lambda f: f.tool_choice == ("named", wanted)

    def explain(f: RequestFacts) -> str:
        mode, name = f.tool_choice
        shown = f"named {name!r}" if mode == "named" else mode
        return f"tool_choice is {shown}, not {wanted if wanted in MODES else 'named ' + repr(wanted)}"

    return Check("tool_choice", test, explain)


def _last(field: str, role: str | None, pattern: str) -> Check:
    label = f"last {role} message" if role else "last message"
    found = compile_search(pattern)

    def test(f: RequestFacts) -> bool:
        message = f.last(role)
        return message is not None and found(message[1])

    def explain(f: RequestFacts) -> str:
        message = f.last(role)
        if message is None:
            return f"no {role} message" if role else "no messages"
        return f"{label} {_short(message[1])} does not match /{pattern}/"

    return Check(field, test, explain)


def _role(role: str) -> Check:
    def explain(f: RequestFacts) -> str:
        message = f.last()
        return "no messages" if message is None else f"last message is from {message[0]}, not {role}"

    return Check("role", lambda f: (f.last() or ("",))[0] == role, explain)


def _turn(value: int | list[int] | TurnRange) -> Check:
    if isinstance(value, TurnRange):
        low, high = value.min or 1, value.max
        shown = f"[{low}..{'' if high is None else high}]"
        test: Callable[[RequestFacts], bool] = lambda f: low <= f.turn and (high is None or f.turn <= high)
    else:
        turns = frozenset([value] if isinstance(value, int) else value)
        shown = "[" + ", ".join(map(str, sorted(turns))) + "]"
        test = lambda f: f.turn in turns
    return Check("turn", test, lambda f: f"turn {f.turn} not in {shown}")


def _header(name: str, pattern: str) -> Check:
    found = compile_search(pattern)

    def test(f: RequestFacts) -> bool:
        value = f.header(name)
        return value is not None and found(value)

    def explain(f: RequestFacts) -> str:
        value = f.header(name)
        if value is None:
            return f"header {name} missing"
        return f"header {name} {_short(value)} does not match /{pattern}/"

    return Check(f"headers.{name}", test, explain)


def compile_match(spec: MatchSpec | None) -> Matcher:
    """Compile a ``match`` block (``None``: match everything). Cheap checks come first."""
    if spec is None:
        return Matcher()
    checks: list[Check] = []
    if spec.endpoint is not None:
        checks.append(_endpoint(spec.endpoint))
    if spec.model is not None:
        checks.append(_model(spec.model))
    if spec.tools is not None:
        checks.append(_tools(spec.tools))
    if spec.stream is not None:
        checks.append(_stream(spec.stream))
    if spec.tool_names is not None:
        checks.append(_tool_names(spec.tool_names))
    if spec.tool_choice is not None:
        checks.append(_tool_choice(spec.tool_choice))
    if spec.turn is not None:
        checks.append(_turn(spec.turn))
    for name, pattern in (spec.headers or {}).items():
        checks.append(_header(name.lower(), pattern))
    if spec.role is not None:
        checks.append(_role(spec.role))
    if spec.last_user is not None:
        checks.append(_last("last_user", "user", spec.last_user))
    if spec.last_tool is not None:
        checks.append(_last("last_tool", "tool", spec.last_tool))
    if spec.last_message is not None:
        checks.append(_last("last_message", None, spec.last_message))
    return Matcher(tuple(checks))
