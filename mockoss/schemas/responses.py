"""``POST /v1/responses`` request schema, as lenient and as strict as vLLM's.

:class:`ResponsesRequest` is the schema: what it accepts is accepted, and its pydantic errors are
the 400s. The server asks :meth:`ResponsesRequest.quick_validate` first
(:class:`QuickResponsesRequest`): the same decision without a model per declared tool.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict on Python < 3.12

from mockoss.profiles.base import ResponsesRequestView, ToolDecl
from mockoss.schemas._quick import keys_are_str, quick_or_none
from mockoss.schemas.decl_cache import DeclCache

__all__ = ["QuickResponsesRequest", "ResponsesRequest"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class ResponsesToolParam(_Lenient):
    """A declared tool: ``function`` (``name``), ``mcp`` (``server_label``) or a built-in."""

    type: str = Field(min_length=1)
    name: str | None = None
    server_label: str | None = None

    def decl(self) -> ToolDecl:
        return _tool_decl(self.type, self.name if self.type == "function" else self.server_label)


def _key_chars(key: tuple[str, str | None]) -> int:
    return len(key[0]) + (len(key[1]) if key[1] is not None else 0)


#: Shared (frozen) :class:`ToolDecl` instances by (type, name), keys of up to
#: :data:`~mockoss.schemas.chat.TOOL_DECL_CACHE_CHARS` characters, bounded in bytes and emptied by
#: reset (:class:`~mockoss.schemas.chat.DeclCache`; issue 9 review, the breaker's finding 3).
_DECLS = DeclCache(lambda key: ToolDecl(*key), _key_chars)


def _tool_decl(kind: str, name: str | None) -> ToolDecl:
    """One shared (frozen) :class:`ToolDecl` per short type and name: an agent declares the same
    tools every turn (as :func:`mockoss.schemas.chat.tool_decl`)."""
    return _DECLS[kind, name]


class _ResponsesFields(_Lenient):
    """The request's fields, in the order pydantic reports their errors (both models below)."""

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

    def tool_decls(self) -> tuple[ToolDecl, ...]:
        """The declared tools, in order."""
        raise NotImplementedError

    def view(self, model: str, body: dict[str, Any]) -> ResponsesRequestView:
        """The profile-facing view; ``model`` is the resolved model name. Its fields are passed
        in :class:`ResponsesRequestView`'s order, not by name (1.2 -> 0.8 us a view without
        tools, measured; ``tests/server/test_validation_quick.py`` checks every field)."""
        return ResponsesRequestView(
            model,
            self.tool_decls() if self.tools else (),  # tools
            self.tool_choice,  # tool_choice
            bool(self.stream),  # stream
            self.max_output_tokens,  # max_output_tokens
            body,
        )


class ResponsesRequest(_ResponsesFields):
    """The request body. ``input`` is a string or a list of input items."""

    @staticmethod
    def quick_validate(body: Any, max_items: int) -> QuickResponsesRequest | None:
        """The request as a :class:`QuickResponsesRequest` when this model certainly accepts
        ``body``, else ``None`` (then :meth:`model_validate` decides, with its own errors)."""
        return quick_validate(body, max_items)

    def tool_decls(self) -> tuple[ToolDecl, ...]:
        return tuple(map(ResponsesToolParam.decl, self.tools))


# -- the quick path ----------------------------------------------------------------------------


@with_config(ConfigDict(extra="ignore"))
class _Tool(TypedDict):
    """:class:`ResponsesToolParam`'s fields."""

    type: Annotated[str, Field(min_length=1)]
    name: NotRequired[str | None]
    server_label: NotRequired[str | None]


class QuickResponsesRequest(_ResponsesFields):
    """:class:`ResponsesRequest`'s fields with plain-dict tools (their declared fields only; the
    request body keeps everything): what :func:`quick_validate` gives the server.

    A ``ResponsesToolParam`` model per declared tool (its description and parameters kept as
    extras) is most of the model's time: 20 function tools, 12.7 us a request instead of 4.2 here
    (measured). Why "this accepts" implies "``ResponsesRequest`` accepts" is
    :class:`mockoss.schemas.chat.QuickChatRequest`'s argument: the same fields, types and
    constraints checked by the same pydantic-core validators; a ``TypedDict`` takes the same
    containers as a model; the model allows unknown keys, with any value but only string keys,
    which :func:`quick_validate` checks; there are no model-level validators.
    """

    tools: list[_Tool] = Field(default_factory=list)  # type: ignore[assignment]

    def tool_decls(self) -> tuple[ToolDecl, ...]:
        return tuple(_dict_tool_decl(t) for t in self.tools)


def _dict_tool_decl(tool: Any) -> ToolDecl:
    kind = tool["type"]
    return _DECLS[kind, tool.get("name") if kind == "function" else tool.get("server_label")]


#: ``QuickResponsesRequest.model_validate`` without its keyword handling (~0.3 us a call, measured).
_validate_quick = QuickResponsesRequest.__pydantic_validator__.validate_python


def quick_validate(body: Any, max_items: int) -> QuickResponsesRequest | None:
    """The validated request when ``ResponsesRequest`` certainly accepts ``body``, else ``None``
    (invalid, not plain JSON data, or more than ``max_items`` tools: the caller validates with
    the model, :mod:`mockoss.server.validation`). Only a ``tools`` that is a list takes this path:
    the model also accepts tuples and iterators, and validating an iterator twice would find it
    consumed."""
    request: QuickResponsesRequest | None = quick_or_none(body, max_items, ("tools",), _validate_quick)
    if request is None:
        return None
    tools = body.get("tools")
    if tools and not keys_are_str(tools):
        return None  # a key that is not a string: the model refuses it (invalid_key)
    return request
