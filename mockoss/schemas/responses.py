"""``POST /v1/responses`` request schema, as lenient and as strict as vLLM's."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mockoss.profiles.base import ResponsesRequestView, ToolDecl

__all__ = ["ResponsesRequest"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class ResponsesToolParam(_Lenient):
    """A declared tool: ``function`` (``name``), ``mcp`` (``server_label``) or a built-in."""

    type: str = Field(min_length=1)
    name: str | None = None
    server_label: str | None = None

    def decl(self) -> ToolDecl:
        return _tool_decl(self.type, self.name if self.type == "function" else self.server_label)


@functools.lru_cache(maxsize=4096)
def _tool_decl(kind: str, name: str | None) -> ToolDecl:
    """One shared (frozen) :class:`ToolDecl` per type and name: an agent declares the same tools
    every turn (as :func:`mockoss.schemas.chat.tool_decl`)."""
    return ToolDecl(kind, name)


class ResponsesRequest(_Lenient):
    """The request body. ``input`` is a string or a list of input items."""

    input: str | list[dict[str, Any]]
    model: str | None = None
    instructions: str | None = None
    stream: bool | None = False
    tools: list[ResponsesToolParam] = Field(default_factory=list)
    tool_choice: str | dict[str, Any] = "auto"
    max_output_tokens: int | None = Field(default=None, ge=1)
    previous_response_id: str | None = None
    store: bool | None = True
    include: list[str] | None = None
    metadata: dict[str, Any] | None = None
    parallel_tool_calls: bool | None = True
    reasoning: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None

    def view(self, model: str, body: dict[str, Any]) -> ResponsesRequestView:
        """The profile-facing view; ``model`` is the resolved model name. Its fields are passed
        in :class:`ResponsesRequestView`'s order, not by name (1.2 -> 0.8 us a view without
        tools, measured; ``tests/server/test_validation_quick.py`` checks every field)."""
        tools = self.tools
        return ResponsesRequestView(
            model,
            tuple(map(ResponsesToolParam.decl, tools)) if tools else (),  # tools
            self.tool_choice,  # tool_choice
            bool(self.stream),  # stream
            self.max_output_tokens,  # max_output_tokens
            body,
        )
