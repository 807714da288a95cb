"""The scenario file format (``version: 1``), as pydantic models.

A scenario is a list of ``rules``; a request is answered by the first rule whose ``match`` block
it meets (:mod:`mockoss.scenario.match_spec`), and each rule consumes its ``steps`` in order. A
top-level ``steps`` list (the original form, still valid) is one rule that matches everything. A
step scripts either a completion (structured Harmony messages, or raw Harmony text used
verbatim, both may hold templates: :mod:`mockoss.scenario.template`) or an HTTP error, and answers
``times`` consecutive requests. ``when_exhausted`` says what a request gets once every step of
its rule has been used.

Example::

    version: 1
    description: Reasoning, then a tool call.
    steps:
      - completion:
          messages:
            - {channel: analysis, content: "Need the weather."}
            - channel: commentary
              recipient: functions.get_weather
              content_type: <|constrain|>json
              content: '{"location": "Tokyo"}'
      - completion:
          raw: "<|channel|>final<|message|>to=functions.get_weather {}<|return|>"
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mockoss.recipient_position import FAULT_DEFAULT, RecipientPositionError, check_message, check_under_fault
from mockoss.scenario.match_spec import EndpointName, MatchSpec
from mockoss.scenario.pick_bounds import weights_problem
from mockoss.scenario.replay import ReplaySpec
from mockoss.scenario.template import check_template
from mockoss.scenario.transport import TransportSpec

__all__ = ["CompletionSpec", "HarmonyMessageSpec", "RuleSpec", "ScenarioFile", "ScriptedError", "StepSpec"]

FORMAT_VERSION = 1


#: Text that may hold ``{{ … }}`` templates, checked when the file loads.
TemplateText = Annotated[str, AfterValidator(check_template)]


def _check_fault(spec: dict[str, Any]) -> dict[str, Any]:
    """Check a fault spec with ``validate_fault``; the error's ``ctx["field"]`` names the bad
    parameter, which the loader appends to the location (``….fault.tokens``)."""
    from pydantic_core import PydanticCustomError

    from mockoss.harmony.faults import FaultError, validate_fault

    try:
        validate_fault(spec)
    except FaultError as exc:
        problem = exc.problem + _stripped_hint(spec, exc.field)
        raise PydanticCustomError("fault", "{problem}", {"problem": problem, "field": exc.field}) from None
    return spec


def _stripped_hint(spec: dict[str, Any], field: str | None) -> str:
    """What ``form: stripped`` under ``tool_call_as_text`` means to say (t18 breaker, finding 9).

    README.md's builder table lists ``stripped`` among ``leak()``'s forms beside the YAML
    ``fault: {kind: tool_call_as_text, form: …}``, but ``leak(form="stripped")`` writes a fault of
    its own, ``kind: special_tokens_stripped`` (mockoss/_steps_builders.py ``LEAK_FORMS``): the
    whole completion with its special tokens removed, not a call written inside a final message.
    The form stays refused (one spelling per fault, as ``to_dict``/``from_dict`` round-trip it);
    the error names the spelling that works."""
    if spec.get("kind") == "tool_call_as_text" and field == "form" and spec.get("form") == "stripped":
        return (
            "; the stripped leak (leak(form='stripped')) is a fault of its own: "
            "write `fault: {kind: special_tokens_stripped}` (`mockoss faults special_tokens_stripped` shows it)"
        )
    return ""


def _error(problem: str, kind: str = "recipient_position") -> Exception:
    """``problem`` as the loader's ``FILE:LINE: FIELD: problem`` line says it (no "Value error, "
    prefix: the words equal the Python builders' ValueError); ``kind``: the pydantic error type."""
    from pydantic_core import PydanticCustomError

    return PydanticCustomError(kind, "{problem}", {"problem": problem})


Exhausted = Literal["repeat_last", "error", "next_rule"]


class _Strict(BaseModel):
    # defer_build (here and on MatchSpec, TransportSpec, ReplaySpec): a model's validator is built
    # on its first use, not at import. The first load builds ScenarioFile's, which holds the nested
    # models' schemas; a nested model builds its own only when used alone (`mockoss schema`, an
    # X-Mockoss-Transport header). Import + first load of clean-answer, CPU, old/new alternated,
    # medians of 9: 31.9 / 37.5 -> 28.4 / 32.6 ms with the lazy did_you_mean (issue 9, start-up).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class HarmonyMessageSpec(_Strict):
    """One assistant message, in Harmony's terms.

    Rendered in openai-harmony 0.0.8's layout (:mod:`mockoss.harmony.layout`):
    ``<|start|>assistant[ to={recipient}][<|channel|>{channel}][ {content_type}]<|message|>{content}``
    then ``<|call|>`` with a recipient, ``<|return|>`` on the final channel, ``<|end|>`` otherwise.
    ``recipient_position: channel`` writes the recipient after the channel instead, as gpt-oss
    usually does (``<|channel|>commentary to=functions.x <|constrain|>json``); SGLang's and
    vllm-mlx's chat tool parsers find only that form (see :mod:`mockoss.harmony.layout`).
    """

    channel: str | None = Field(default=None, description="analysis, commentary or final")
    recipient: str | None = Field(default=None, description="e.g. functions.get_weather")
    content_type: str | None = Field(default=None, description="e.g. <|constrain|>json, json, code")
    content: TemplateText = ""
    recipient_position: Literal["role", "channel"] | None = Field(
        default=None,
        description="where ' to={recipient}' goes: 'role' (after the role, openai-harmony 0.0.8's renderer; "
        "unset: 'role', or with a 'fault' the fault's recipient_position) or 'channel' (after "
        "'<|channel|>{channel}', as gpt-oss usually writes it; SGLang's and vllm-mlx's chat parsers need it; "
        "needs a channel and a recipient). With a 'fault', only the fault's own value is accepted",
    )

    @field_validator("recipient_position")
    @classmethod
    def _position_applies(cls, value: str | None, info: ValidationInfo) -> str | None:
        # The rules tool_call()/Message apply, in their words (mockoss.recipient_position).
        if value is not None and "channel" in info.data and "recipient" in info.data:
            try:
                check_message(value, channel=info.data["channel"], recipient=info.data["recipient"])
            except RecipientPositionError as exc:
                raise _error(exc.problem) from None
        return value


class CompletionSpec(_Strict):
    """What the model emits after ``<|start|>assistant``: ``messages`` or ``raw``, not both.

    ``fault`` (with ``messages`` only) applies a :mod:`mockoss.harmony.faults` kind to the
    messages, e.g. ``{kind: duplicate_recipient}``; it is checked when the file loads.
    """

    messages: list[HarmonyMessageSpec] | None = Field(default=None, min_length=1)
    raw: TemplateText | None = Field(
        default=None, min_length=1, description="Harmony text with special tokens, verbatim"
    )
    fault: Annotated[dict[str, Any], AfterValidator(_check_fault)] | None = Field(
        default=None, description="a Harmony fault applied to 'messages'"
    )

    @model_validator(mode="after")
    def _one_form(self) -> CompletionSpec:
        if (self.messages is None) == (self.raw is None):
            raise ValueError("give exactly one of 'messages' or 'raw'")
        if self.fault is not None and self.messages is None:
            raise ValueError("'fault' applies to 'messages'; 'raw' text is used verbatim")
        if self.fault is not None and self.messages is not None:
            # _check_fault has checked the fault: its recipient_position is a position, or unset.
            wanted = self.fault.get("recipient_position", FAULT_DEFAULT)
            try:
                check_under_fault([m.recipient_position for m in self.messages], wanted)
            except RecipientPositionError as exc:
                raise _error(str(exc)) from None
        return self


class ScriptedError(_Strict):
    """An HTTP error the server answers instead of a completion, in the profile's error body."""

    status: int = Field(ge=400, le=599)
    message: str = "Scripted error"
    retry_after: int | None = Field(default=None, ge=0, description="Retry-After header, seconds")


class PickOption(_Strict):
    """One possible answer of a ``pick`` step: a ``completion`` or an ``error``, with a ``weight``."""

    weight: StrictInt = Field(default=1, ge=1, description="relative frequency of this answer")
    completion: CompletionSpec | None = None
    error: ScriptedError | None = None
    note: str | None = Field(default=None, description="shown in logs and failure reports")
    transport: TransportSpec | None = Field(default=None, description="overrides the step's transport")

    @model_validator(mode="after")
    def _one_answer(self) -> PickOption:
        if (self.completion is None) == (self.error is None):
            raise ValueError("give exactly one of 'completion' or 'error'")
        return self


class StepSpec(_Strict):
    """One scripted answer for ``times`` consecutive requests: a ``completion``, an ``error``, or a
    seeded ``pick`` among weighted answers (a model that misbehaves one time in ten).

    ``pick_mode: deck`` (default) deals the options from a seeded, shuffled deck holding each
    option ``weight`` times, reshuffled every ``sum(weights)`` uses: any ``sum(weights)``
    consecutive uses give exactly the weighted counts, whatever order concurrent clients arrive
    in; ``sum(weights)`` is at most 10**15 (weights are ratios). ``pick_mode: draw`` draws each
    use independently (seeded), like sampling a real model.
    ``replay`` returns a recorded reply byte for byte (:mod:`mockoss.scenario.replay`).
    """

    completion: CompletionSpec | None = None
    error: ScriptedError | None = None
    pick: list[PickOption] | None = Field(default=None, min_length=1, description="weighted answers, one per request")
    replay: ReplaySpec | None = Field(default=None, description="a recorded reply returned byte for byte")
    pick_mode: Literal["deck", "draw"] = "deck"
    note: str | None = Field(default=None, description="shown in logs and failure reports")
    times: StrictInt = Field(default=1, ge=1, description="consecutive requests this step answers")
    optional: bool = Field(default=False, description="may go unused without failing assert_all_steps_used")
    tool_mismatch_intended: bool = Field(
        default=False,
        description="the completion calls an undeclared tool, or passes arguments off its schema, on purpose: no warning",
    )
    transport: TransportSpec | None = Field(
        default=None, description="timing and transport faults for this answer (mockoss.scenario.transport)"
    )
    endpoint: EndpointName | None = Field(
        default=None,
        description="the endpoint this step answered when recorded (mockoss serve --record): a request to another "
        "endpoint gets a 400 naming both and takes no step; absent: any endpoint",
    )

    @model_validator(mode="after")
    def _one_answer(self) -> StepSpec:
        if sum(x is not None for x in (self.completion, self.error, self.pick, self.replay)) != 1:
            raise ValueError("give exactly one of 'completion', 'error', 'pick' or 'replay'")
        if self.pick is not None and (problem := weights_problem([o.weight for o in self.pick], self.pick_mode)):
            raise ValueError(problem)
        return self


class RuleSpec(_Strict):
    """Steps that answer the requests meeting ``match`` (every request, without ``match``).

    ``when_exhausted`` and ``exhausted_error`` default to the scenario's. ``next_rule``: once
    every step is used, the rule stops matching and later rules are tried.
    """

    name: str | None = Field(default=None, min_length=1, description="shown in errors and the request log")
    match: MatchSpec | None = None
    steps: list[StepSpec] = Field(min_length=1)
    when_exhausted: Exhausted | None = None
    exhausted_error: ScriptedError | None = None


class ScenarioFile(_Strict):
    """A whole scenario file: ``steps`` (one rule matching everything) or ``rules``, not both."""

    version: Literal[1]
    description: str = ""
    source: str | list[str] | None = Field(default=None, description="public report(s) it reproduces")
    switches: dict[str, Any] = Field(default_factory=dict, description="profile switches to apply")
    seed: StrictInt | str | None = Field(default=None, description="seeds templates; default: the server's seed")
    steps: list[StepSpec] | None = Field(default=None, min_length=1)
    rules: list[RuleSpec] | None = Field(default=None, min_length=1)
    when_exhausted: Exhausted = "repeat_last"
    exhausted_error: ScriptedError = ScriptedError(
        status=500, message="mockoss: scenario exhausted: every scripted step has been used"
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_the_integer(cls, value: Any) -> Any:
        # pydantic's lax Literal[1] took `version: true` and `version: 1.0` (a breaker's F6, issue 9's
        # 15th session): a file's format version is the integer 1, as `version: '1'` already had to be.
        if type(value) is not int:
            raise _error("Input should be 1", "literal_error")  # pydantic's own type and words for version: 2
        return value

    @model_validator(mode="after")
    def _steps_or_rules(self) -> ScenarioFile:
        if (self.steps is None) == (self.rules is None):
            raise ValueError("give exactly one of 'steps' or 'rules'")
        names = [rule.name for rule in self.rules or () if rule.name is not None]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError("rule names must be unique; repeated: " + ", ".join(duplicates))
        return self
