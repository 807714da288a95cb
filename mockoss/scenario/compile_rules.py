"""Compile a validated scenario file's rules and steps (split out of :mod:`mockoss.scenario.loader`,
moved as they were, to keep the loader under the team's ~400 lines; the loader calls
:func:`compile_rule`). Completions are rendered and tokenized here, once; a problem in one becomes
the file's ``FILE:LINE: FIELD: problem`` entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import yaml

from mockoss.harmony import Completion
from mockoss.harmony.encoding import VocabularyError
from mockoss.scenario.compiled import Rule, Step
from mockoss.scenario.locate import key_line
from mockoss.scenario.locate import loc_text as _loc_text
from mockoss.scenario.locate import node_line as _node_line
from mockoss.scenario.match_spec import MatchSpec
from mockoss.scenario.matching import compile_match
from mockoss.scenario.render import CompletionTemplate, compile_completion
from mockoss.scenario.replay import compile_replay, replay_transport
from mockoss.scenario.schema import PickOption, RuleSpec, ScenarioFile, StepSpec
from mockoss.scenario.template import parse_template
from mockoss.scenario.transport import TransportSpec

__all__ = ["compile_rule"]


def _compile_step(index: int, spec: StepSpec | PickOption) -> Step:
    """Compile one answer; a ``pick`` step's options are compiled by :func:`compile_rule`."""
    compiled = compile_completion(spec.completion) if spec.completion is not None else None
    template = compiled if isinstance(compiled, CompletionTemplate) else None
    completion = compiled if isinstance(compiled, Completion) else None
    return Step(
        index=index,
        completion=completion,
        error=spec.error,
        note=spec.note,
        transport=_transport(spec),
        times=getattr(spec, "times", 1),
        template=template,
        replay=compile_replay(replay) if (replay := getattr(spec, "replay", None)) is not None else None,
        optional=getattr(spec, "optional", False),
        tool_calls=_tool_calls(spec),
        endpoint=getattr(spec, "endpoint", None),
    )


def _transport(spec: StepSpec | PickOption) -> TransportSpec | None:
    """The step's ``transport:``; for a ``replay:`` step without one, the pacing of its recorded
    ``frame_times_ms`` (:func:`mockoss.scenario.replay.replay_transport`)."""
    replay = getattr(spec, "replay", None)
    if spec.transport is not None or replay is None:
        return spec.transport
    return replay_transport(replay)


def _tool_calls(spec: StepSpec | PickOption) -> tuple[tuple[str, str | None], ...]:
    """The ``functions.NAME`` calls a step's messages make, for :mod:`mockoss.scenario.tool_check`."""
    completion = spec.completion
    if completion is None or completion.raw is not None or completion.fault is not None:
        return ()
    if getattr(spec, "tool_mismatch_intended", False):
        return ()
    calls = []
    for message in completion.messages or ():
        recipient = message.recipient or ""
        if recipient.startswith("functions."):
            templated = parse_template(message.content) is not None
            calls.append((recipient.removeprefix("functions."), None if templated else message.content))
    return tuple(calls)


def compile_rule(
    spec: ScenarioFile,
    index: int,
    rule: RuleSpec | None,
    match: MatchSpec | None,
    step_specs: Sequence[StepSpec],
    at: list[int | str],
    origin: str,
    root: yaml.Node | None,
    name: str,
    errors: list[str],
) -> Rule:
    """Compile one rule (``rule`` is ``None`` for a top-level ``steps`` list), adding any
    problem to ``errors`` as ``FILE:LINE: FIELD: problem``."""

    steps = []
    for position, step_spec in enumerate(step_specs):
        if step_spec.pick is not None:
            options = []
            for choice, option in enumerate(step_spec.pick):
                compiled = _compile_answer(position, option, [*at, position, "pick", choice], origin, root, errors)
                if compiled is not None:
                    options.append((option.weight, compiled))
            steps.append(
                Step(
                    index=position,
                    completion=None,
                    error=None,
                    note=step_spec.note,
                    transport=step_spec.transport,
                    times=step_spec.times,
                    options=tuple(options),
                    pick_mode=step_spec.pick_mode,
                    bounds=tuple(accumulate(weight for weight, _ in options)),  # summed once, not on every use
                    optional=step_spec.optional,
                    endpoint=step_spec.endpoint,
                )
            )
            continue
        compiled = _compile_answer(position, step_spec, [*at, position], origin, root, errors)
        if compiled is not None:
            steps.append(compiled)
    line = _node_line(root, at[:-1]) if rule is not None else key_line(root, "steps")
    place = f"scenario {origin}" if origin != "<inline>" else f"scenario {name}"
    label = f"rule {rule.name!r}" if rule is not None and rule.name else f"rule #{index + 1}"
    return Rule(
        index=index,
        name=rule.name if rule is not None else None,
        label=label,
        where=f"{place}:{line}" if line and root is not None else place,
        match=compile_match(match),
        steps=tuple(steps),
        ends=tuple(accumulate(step.times for step in steps)),
        when_exhausted=(rule.when_exhausted if rule is not None else None) or spec.when_exhausted,
        exhausted_error=(rule.exhausted_error if rule is not None else None) or spec.exhausted_error,
    )


def _compile_answer(
    index: int,
    spec: StepSpec | PickOption,
    at: list[int | str],
    origin: str,
    root: yaml.Node | None,
    errors: list[str],
) -> Step | None:
    """Compile a step or a pick option; on a problem, add ``FILE:LINE: FIELD: problem`` to
    ``errors`` and return ``None``."""
    loc: list[int | str] = [*at, "completion"]
    try:
        return _compile_step(index, spec)
    except VocabularyError:  # the tokenizer cannot load at all: not a problem of this file
        raise
    except BaseException as exc:  # each kind becomes this file's error entry below
        # pyo3's PanicException (openai-harmony's tokenizer panicking on a text, e.g. a word of a
        # million characters overflows its pre-tokenizer's stack) is a BaseException: this file's
        # problem too, not a traceback from `mockoss validate` nor a 500 from an upload.
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        # Imported here, not for every answer: a scenario without faults never needs the fault
        # library (issue 9, start-up); a FaultError means it is loaded already.
        from mockoss.harmony.faults import FaultError

        if type(exc).__name__ == "PanicException":
            problem = f"openai-harmony cannot tokenize this content (its tokenizer panicked: {str(exc)[:200]}); shorten its longest word"
        elif not isinstance(exc, FaultError):  # the renderer or tokenizer refused the content
            problem = str(exc)
        elif exc.field != "fault":
            loc = [*loc, "fault", exc.field]
            problem = exc.problem
        else:
            loc, problem = [*loc, "fault"], exc.problem
    line = _node_line(root, loc)
    errors.append(f"{origin}:{line}: {_loc_text(loc)}: {problem}" if line else f"{origin}: {_loc_text(loc)}: {problem}")
    return None
