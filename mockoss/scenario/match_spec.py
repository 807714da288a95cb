"""The ``match`` block of a scenario rule, as pydantic models (part of the ``version: 1`` format).

Every field is optional and every given field must hold; a rule without ``match`` matches every
request. Regular expressions are Python :mod:`re` syntax run by RE2 (linear time; no
backreferences or lookarounds, see :mod:`mockoss.scenario.pattern`), searched anywhere in the text
(``re.search``, as ``pytest.raises(match=…)`` does); anchor them with ``^…$`` for a full match and
put flags inline, e.g. ``(?i)``. A pattern RE2 cannot run fails when the file loads. What
``turn``, ``last_user``, ``last_tool`` and ``last_message`` read from each endpoint's body is
described in :mod:`mockoss.scenario.conversation`.

Example::

    match:
      endpoint: [chat, responses]
      model: {regex: "gpt-oss-(20|120)b$"}
      tools: true
      tool_names: [terminal]
      tool_choice: auto
      last_tool: "(?i)error"
      turn: {min: 2}
      headers: {x-agent: "^hermes"}
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    model_validator,
)
from pydantic_core import PydanticCustomError

from mockoss.scenario.pattern import PatternError, compile_search

__all__ = ["ROLES", "MatchSpec", "ModelRegex", "Regex", "TurnRange"]

#: Roles a conversation message can have, as :mod:`mockoss.scenario.conversation` reports them.
ROLES = ("system", "developer", "user", "assistant", "tool")


def _check_regex(pattern: str) -> str:
    try:
        compile_search(pattern)
    except PatternError as exc:
        raise PydanticCustomError(
            "regex", "invalid regular expression '{pattern}': {reason}", {"pattern": pattern, "reason": str(exc)}
        ) from None
    return pattern


#: A regular expression (Python syntax, run by RE2), checked when the file loads.
Regex = Annotated[str, AfterValidator(_check_regex), Field(json_schema_extra={"format": "regex"})]


def _check_endpoint(name: str) -> str:
    from mockoss.endpoints import ENDPOINTS

    if name not in ENDPOINTS:
        raise PydanticCustomError(
            "endpoint",
            "unknown endpoint '{name}'; valid endpoints: {valid}",
            {"name": name, "valid": ", ".join(ENDPOINTS)},
        )
    return name


EndpointName = Annotated[str, AfterValidator(_check_endpoint)]
Turn = Annotated[StrictInt, Field(ge=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ModelRegex(_Strict):
    """``model: {regex: PATTERN}``: the request's model name must match ``PATTERN``."""

    regex: Regex


class TurnRange(_Strict):
    """``turn: {min: 2, max: 4}``: an inclusive range; either bound may be left out."""

    min: Turn | None = None
    max: Turn | None = None

    @model_validator(mode="after")
    def _bounds(self) -> TurnRange:
        if self.min is None and self.max is None:
            raise PydanticCustomError("turn_range", "give 'min', 'max' or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise PydanticCustomError(
                "turn_range", "'min' ({min}) is above 'max' ({max})", {"min": self.min, "max": self.max}
            )
        return self


class MatchSpec(_Strict):
    """Conditions on a request; a rule answers only requests that meet all of them."""

    endpoint: EndpointName | list[EndpointName] | None = Field(
        default=None, description="endpoint name(s) from mockoss.endpoints.ENDPOINTS, e.g. chat, responses"
    )
    model: str | list[str] | ModelRegex | None = Field(
        default=None, description="exact model name(s), or {regex: PATTERN}; the served name when the body has none"
    )
    tools: StrictBool | None = Field(
        default=None, description="true: the request declares tools; false: it declares none"
    )
    stream: StrictBool | None = Field(
        default=None,
        description="true: the request asks for a stream (stream: true; Ollama's /api/chat and /api/generate "
        "stream unless stream: false); false: it does not",
    )
    tool_names: list[str] | None = Field(default=None, min_length=1, description="tools that must all be declared")
    tool_choice: str | None = Field(
        default=None,
        description="auto, none, required, named (any named choice), or the name a named choice gives; "
        "a request without tool_choice counts as auto when it declares tools, else none",
    )
    last_user: Regex | None = Field(default=None, description="regex searched in the last user message's text")
    last_tool: Regex | None = Field(default=None, description="regex searched in the last tool result's text")
    last_message: Regex | None = Field(default=None, description="regex searched in the last message's text")
    role: Literal["system", "developer", "user", "assistant", "tool"] | None = Field(
        default=None, description="role of the last message"
    )
    turn: Turn | list[Turn] | TurnRange | None = Field(
        default=None, description="turn number (1 = first request of a conversation): N, [N, …] or {min, max}"
    )
    headers: dict[str, Regex] | None = Field(
        default=None, description="header name (any case) → regex its value must match; a missing header fails"
    )

    def given(self) -> dict[str, Any]:
        """The fields that are set, in declaration order."""
        return {name: value for name, value in self if value is not None}
