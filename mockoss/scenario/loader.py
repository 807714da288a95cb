"""Load scenario files and compile them into ready-to-serve :class:`Scenario` objects.

Completions are rendered and tokenized once, at load time, and reused by every request.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from openai_harmony import Message, Role
from pydantic import ValidationError

from mockoss.harmony import Completion
from mockoss.scenario.schema import FORMAT_VERSION, HarmonyMessageSpec, ScenarioFile, ScriptedError, StepSpec

__all__ = ["Scenario", "ScenarioError", "Step", "builtin_names", "load_scenario", "scenario_from_data"]


class ScenarioError(ValueError):
    """A scenario file cannot be read or does not follow the format.

    ``str()`` names the file, the line and the field, e.g.
    ``scenarios/x.yaml:7: steps[0].completion.messages[0].chanel: unknown field``.
    """


@dataclass(frozen=True, slots=True)
class Step:
    """A compiled step: exactly one of ``completion`` or ``error`` is set."""

    index: int
    completion: Completion | None
    error: ScriptedError | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    """A compiled scenario: steps ready to serve, plus the file's settings."""

    name: str
    description: str
    steps: tuple[Step, ...]
    when_exhausted: str
    exhausted_error: ScriptedError
    switches: Mapping[str, Any]
    origin: str


def _message(spec: HarmonyMessageSpec) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, spec.content)
    if spec.channel is not None:
        message = message.with_channel(spec.channel)
    if spec.recipient is not None:
        message = message.with_recipient(spec.recipient)
    if spec.content_type is not None:
        message = message.with_content_type(spec.content_type)
    return message


def _compile_step(index: int, spec: StepSpec) -> Step:
    completion = None
    if spec.completion is not None:
        if spec.completion.raw is not None:
            completion = Completion.from_text(spec.completion.raw)
        else:
            completion = Completion.from_messages([_message(m) for m in spec.completion.messages or ()])
    return Step(index=index, completion=completion, error=spec.error, note=spec.note)


def _loc_text(loc: Sequence[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _node_line(node: yaml.Node | None, loc: Sequence[int | str]) -> int | None:
    """Follow ``loc`` through the YAML node tree; return the 1-based line of the deepest match."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if node is None:
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _validation_errors(origin: str, root: yaml.Node | None, error: ValidationError) -> Iterator[str]:
    for item in error.errors():
        loc = [p for p in item["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        line = _node_line(root, loc)
        message = "unknown field" if item["type"] == "extra_forbidden" else item["msg"]
        where = f"{origin}:{line}" if line else origin
        yield f"{where}: {_loc_text(loc)}: {message}"


def scenario_from_data(
    data: Any, *, name: str, origin: str = "<inline>", root: yaml.Node | None = None, default_version: bool = False
) -> Scenario:
    """Validate already-parsed scenario data (a dict) and compile it.

    ``default_version=True`` (inline scenarios written in tests) lets ``version`` be omitted.

    Raises:
        ScenarioError: the data does not follow the format; one line per problem.
    """
    if default_version and isinstance(data, Mapping) and "version" not in data:
        data = {"version": FORMAT_VERSION, **data}
    try:
        spec = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError("\n".join(_validation_errors(origin, root, exc))) from None
    steps = []
    for index, step in enumerate(spec.steps):
        try:
            steps.append(_compile_step(index, step))
        except Exception as exc:  # tokenizer or renderer refused the content
            line = _node_line(root, ["steps", index])
            where = f"{origin}:{line}" if line else origin
            raise ScenarioError(f"{where}: steps[{index}].completion: {exc}") from None
    return Scenario(
        name=name,
        description=spec.description,
        steps=tuple(steps),
        when_exhausted=spec.when_exhausted,
        exhausted_error=spec.exhausted_error,
        switches=dict(spec.switches),
        origin=origin,
    )


def _builtin_dir() -> importlib.resources.abc.Traversable:
    return importlib.resources.files("mockoss.scenarios")


def builtin_names() -> list[str]:
    """Names of the scenarios that ship with mockoss, sorted."""
    return sorted(p.name.removesuffix(".yaml") for p in _builtin_dir().iterdir() if p.name.endswith(".yaml"))


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario from a YAML file path, or by the name of a shipped scenario.

    Raises:
        ScenarioError: no such file or shipped name (the message lists the shipped names), YAML
            syntax errors (with line and column), or schema errors (file, line and field).
    """
    candidate = Path(path_or_name)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        if not candidate.is_file():
            raise ScenarioError(f"{candidate}: no such scenario file")
        text, origin, name = candidate.read_text(encoding="utf-8"), str(candidate), candidate.stem
    else:
        resource = _builtin_dir() / f"{path_or_name}.yaml"
        if not resource.is_file():
            raise ScenarioError(
                f"unknown scenario {str(path_or_name)!r}: not a file, and not one of the shipped scenarios: "
                + ", ".join(builtin_names())
            )
        text, origin, name = resource.read_text(encoding="utf-8"), f"mockoss:scenarios/{path_or_name}.yaml", str(path_or_name)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{origin}:{mark.line + 1}:{mark.column + 1}" if mark else origin
        raise ScenarioError(f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{origin}:1: (top level): a scenario file is a mapping with 'version' and 'steps'")
    return scenario_from_data(data, name=name, origin=origin, root=root)
