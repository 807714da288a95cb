"""The scenario file format (``version: 1``), as pydantic models.

A scenario is a list of steps; each request consumes the next step. A step scripts either a
completion (structured Harmony messages, or raw Harmony text used verbatim) or an HTTP error.
``when_exhausted`` says what a request gets once every step has been used.

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

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["CompletionSpec", "HarmonyMessageSpec", "ScenarioFile", "ScriptedError", "StepSpec"]

FORMAT_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HarmonyMessageSpec(_Strict):
    """One assistant message, in Harmony's terms.

    Rendered by openai-harmony: ``<|start|>assistant[ to={recipient}][<|channel|>{channel}]
    [ {content_type}]<|message|>{content}`` then ``<|call|>`` with a recipient, ``<|return|>`` on
    the final channel, ``<|end|>`` otherwise.
    """

    channel: str | None = Field(default=None, description="analysis, commentary or final")
    recipient: str | None = Field(default=None, description="e.g. functions.get_weather")
    content_type: str | None = Field(default=None, description="e.g. <|constrain|>json, json, code")
    content: str = ""


class CompletionSpec(_Strict):
    """What the model emits after ``<|start|>assistant``: ``messages`` or ``raw``, not both."""

    messages: list[HarmonyMessageSpec] | None = Field(default=None, min_length=1)
    raw: str | None = Field(default=None, min_length=1, description="Harmony text with special tokens, verbatim")

    @model_validator(mode="after")
    def _one_form(self) -> CompletionSpec:
        if (self.messages is None) == (self.raw is None):
            raise ValueError("give exactly one of 'messages' or 'raw'")
        return self


class ScriptedError(_Strict):
    """An HTTP error the server answers instead of a completion, in the profile's error body."""

    status: int = Field(ge=400, le=599)
    message: str = "Scripted error"
    retry_after: int | None = Field(default=None, ge=0, description="Retry-After header, seconds")


class StepSpec(_Strict):
    """One scripted answer: a ``completion`` or an ``error``."""

    completion: CompletionSpec | None = None
    error: ScriptedError | None = None
    note: str | None = Field(default=None, description="shown in logs and failure reports")

    @model_validator(mode="after")
    def _one_answer(self) -> StepSpec:
        if (self.completion is None) == (self.error is None):
            raise ValueError("give exactly one of 'completion' or 'error'")
        return self


class ScenarioFile(_Strict):
    """A whole scenario file."""

    version: Literal[1]
    description: str = ""
    source: str | list[str] | None = Field(default=None, description="public report(s) it reproduces")
    switches: dict[str, Any] = Field(default_factory=dict, description="profile switches to apply")
    steps: list[StepSpec] = Field(min_length=1)
    when_exhausted: Literal["repeat_last", "error"] = "repeat_last"
    exhausted_error: ScriptedError = ScriptedError(
        status=500, message="mockoss: scenario exhausted: every scripted step has been used"
    )
