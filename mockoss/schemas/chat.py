"""``POST /v1/chat/completions`` request schema, as lenient and as strict as vLLM's.

vLLM's request models allow unknown fields (it logs and ignores them), so every field the official
SDKs and common agents send is accepted; only what vLLM rejects is rejected.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mockoss.profiles.base import ChatRequestView, ToolDecl

__all__ = ["ChatCompletionRequest"]


def _one_choice(value: int | None) -> int | None:
    """``n`` > 1 is refused: one scripted completion answers a request (vLLM would sample ``n``
    choices), so the 400 says it is mockoss's limit, not the server's."""
    if value is not None and value > 1:
        raise ValueError(f"mockoss: n={value} is not emulated: one scripted completion answers each request")
    return value

class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class ChatMessageParam(_Lenient):
    """One conversation message; content is a string, a list of content parts, or null."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class FunctionDefinition(_Lenient):
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ChatToolParam(_Lenient):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class NamedToolChoiceFunction(_Lenient):
    name: str


class NamedToolChoice(_Lenient):
    type: Literal["function"] = "function"
    function: NamedToolChoiceFunction


class StreamOptions(_Lenient):
    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class ChatCompletionRequest(_Lenient):
    """The request body. ``model`` may be omitted (vLLM then uses its first served name)."""

    messages: list[ChatMessageParam] = Field(min_length=1)
    model: str | None = None
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    tools: list[ChatToolParam] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    include_reasoning: bool = True
    temperature: float | None = None
    top_p: float | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    n: int | None = Field(default=1, ge=1)

    @field_validator("n")
    @classmethod
    def _check_n(cls, value: int | None) -> int | None:
        return _one_choice(value)

    @model_validator(mode="after")
    def _check_tool_usage(self) -> ChatCompletionRequest:
        """vLLM's ``check_tool_usage``: a ``tool_choice`` other than ``none`` needs ``tools``,
        and a named choice must name a declared tool."""
        choice = self.tool_choice
        if choice is None or choice == "none":
            return self
        if self.tools is None:
            raise ValueError("When using `tool_choice`, `tools` must be set.")
        if isinstance(choice, NamedToolChoice) and choice.function.name not in {t.function.name for t in self.tools}:
            raise ValueError(f"Tool '{choice.function.name}' has not been passed in `tools`.")
        return self

    def view(self, model: str, body: dict[str, Any]) -> ChatRequestView:
        """The profile-facing view; ``model`` is the resolved model name."""
        choice = self.tool_choice
        options = self.stream_options
        return ChatRequestView(
            model=model,
            tools=tuple(ToolDecl("function", t.function.name) for t in self.tools or ()),
            tool_choice=choice.model_dump() if isinstance(choice, BaseModel) else choice,
            stream=bool(self.stream),
            include_usage=bool(options and options.include_usage),
            continuous_usage_stats=bool(options and options.continuous_usage_stats),
            include_reasoning=self.include_reasoning,
            max_tokens=self.max_completion_tokens or self.max_tokens,
            body=body,
        )
