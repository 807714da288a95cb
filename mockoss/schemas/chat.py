"""``POST /v1/chat/completions`` request schema, as lenient and as strict as vLLM's.

vLLM's request models allow unknown fields (it logs and ignores them), so every field the official
SDKs and common agents send is accepted; only what vLLM rejects is rejected.

:class:`ChatCompletionRequest` is the schema: what it accepts is accepted, and its pydantic errors
(messages and locations) are the 400s. The server asks :meth:`ChatCompletionRequest.quick_validate`
first (:class:`QuickChatRequest`, below): the same decision without a model per message and per
tool.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator, with_config
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict on Python < 3.12

from mockoss.profiles.base import ChatRequestView, ToolDecl
from mockoss.schemas._quick import keys_are_str as _keys_are_str
from mockoss.schemas._quick import lists_fit, valid_or_none
from mockoss.schemas.decl_cache import TOOL_DECL_CACHE_BYTES, TOOL_DECL_CACHE_CHARS, DeclCache
from mockoss.slotnew import slot_builder

__all__ = [
    "TOOL_DECL_CACHE_BYTES",
    "TOOL_DECL_CACHE_CHARS",
    "ChatCompletionRequest",
    "DeclCache",
    "QuickChatRequest",
    "SeenChatRequest",
    "quick_validate",
    "tool_decl",
]


_make_view = slot_builder(ChatRequestView)


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


class _ChatRequestFields(_Lenient):
    """The request's fields, in the order pydantic reports their errors (both models below)."""

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

    def tool_names(self) -> list[str]:
        """The declared function names, in order."""
        raise NotImplementedError

    def tool_decls(self) -> tuple[ToolDecl, ...]:
        """The view's tools: a ``function`` declaration per name, in order."""
        return tuple(map(tool_decl, self.tool_names()))

    def view(self, model: str, body: dict[str, Any]) -> ChatRequestView:
        """The profile-facing view; ``model`` is the resolved model name. Its fields are passed
        in :class:`ChatRequestView`'s order, not by name (~0.25 of its ~1 us, measured;
        ``tests/server/test_validation_quick.py`` checks every field)."""
        choice = self.tool_choice
        options = self.stream_options
        return _make_view(  # ChatRequestView(...) without its frozen __init__ (mockoss.slotnew)
            model,
            self.tool_decls() if self.tools else (),  # tools
            choice.model_dump() if isinstance(choice, BaseModel) else choice,  # tool_choice
            bool(self.stream),  # stream
            bool(options and options.include_usage),  # include_usage
            bool(options and options.continuous_usage_stats),  # continuous_usage_stats
            self.include_reasoning,  # include_reasoning
            self.max_completion_tokens or self.max_tokens,  # max_tokens
            body,
        )


class ChatCompletionRequest(_ChatRequestFields):
    """The request body. ``model`` may be omitted (vLLM then uses its first served name)."""

    @model_validator(mode="after")
    def _check_tool_usage(self) -> ChatCompletionRequest:
        """vLLM's ``check_tool_usage``: a ``tool_choice`` other than ``none`` needs ``tools``,
        and a named choice must name a declared tool."""
        problem = tool_usage_problem(self.tool_choice, self.tools, _model_tool_name)
        if problem is not None:
            raise ValueError(problem)
        return self

    @staticmethod
    def quick_validate(body: Any, max_items: int) -> QuickChatRequest | None:
        """The request as a :class:`QuickChatRequest` when this model certainly accepts ``body``,
        else ``None`` (then :meth:`model_validate` decides, with its own errors)."""
        return quick_validate(body, max_items)

    def tool_names(self) -> list[str]:
        return [t.function.name for t in self.tools or ()]


def _model_tool_name(tool: ChatToolParam) -> str:
    return tool.function.name


def tool_usage_problem(choice: Any, tools: Iterable[Any] | None, name_of: Callable[[Any], str]) -> str | None:
    """Why ``tool_choice`` cannot be used with ``tools`` (vLLM's ``check_tool_usage``), else
    ``None``; ``name_of`` gives a declared tool's function name."""
    if choice is None or choice == "none":
        return None
    if tools is None:
        return "When using `tool_choice`, `tools` must be set."
    if isinstance(choice, NamedToolChoice) and choice.function.name not in {name_of(t) for t in tools}:
        return f"Tool '{choice.function.name}' has not been passed in `tools`."
    return None


#: ``ToolDecl("function", name)`` by name: an agent declares the same tools every turn (20 tools:
#: ~1 us instead of ~5 us a view, measured).
_DECLS = DeclCache(functools.partial(ToolDecl, "function"), len)
#: ``tool_decl(name)`` is ``ToolDecl("function", name)``, one shared (frozen) instance per
#: short name (:class:`DeclCache`).
tool_decl: Callable[[str], ToolDecl] = _DECLS.__getitem__


# -- the quick path ----------------------------------------------------------------------------


@with_config(ConfigDict(extra="ignore"))
class _Message(TypedDict):
    """:class:`ChatMessageParam`'s fields."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: NotRequired[str | list[dict[str, Any]] | None]


@with_config(ConfigDict(extra="ignore"))
class _Function(TypedDict):
    """:class:`FunctionDefinition`'s fields."""

    name: Annotated[str, Field(min_length=1)]
    description: NotRequired[str | None]
    parameters: NotRequired[dict[str, Any] | None]


@with_config(ConfigDict(extra="ignore"))
class _Tool(TypedDict):
    """:class:`ChatToolParam`'s fields."""

    type: NotRequired[Literal["function"]]
    function: _Function


class QuickChatRequest(_ChatRequestFields):
    """:class:`ChatCompletionRequest`'s fields with plain-dict messages and tools (their declared
    fields only; the request body keeps everything): what :func:`quick_validate` gives the server.

    The model builds a ``ChatMessageParam`` for every message and a ``ChatToolParam`` and a
    ``FunctionDefinition`` for every tool, and nothing reads them (the view needs the tool names
    only). Here those items are ``TypedDict``\\ s with the same annotations and constraints,
    checked by the same pydantic-core validators without a model instance each: an agent's turn
    (50 messages, 20 tools) validates in ~20 instead of ~50 us, a 3-message request in ~1.9
    instead of ~2.8 us (``validate_request``, measured in the same run).

    Why "this accepts" implies "``ChatCompletionRequest`` accepts" (the only direction needed:
    on any doubt :func:`quick_validate` gives ``None`` and the model decides, with its errors):

    * each item field has the same type, default and constraints, so pydantic runs the same
      checks; a ``TypedDict`` and a model accept the same containers (a ``dict`` or, lax, any
      ``Mapping``); only the message for anything else differs, and no error comes from here;
    * item dicts ignore unknown keys here (keeping them costs ~2x) where the model allows them:
      both accept any value there, but the model refuses a key that is not a string
      (``invalid_key``), so :func:`quick_validate` checks that the keys are strings
      (:func:`_keys_are_str`; always so for JSON);
    * the model-level ``check_tool_usage`` is the same function (:func:`tool_usage_problem`),
      run after validation instead of as an ``after`` validator (which, too, runs only once
      every field is valid);
    * no validator reads two items, so an item's decision does not depend on its siblings.
    """

    messages: list[_Message] = Field(min_length=1)  # type: ignore[assignment]
    tools: list[_Tool] | None = None  # type: ignore[assignment]

    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools or ()]  # 20 tools: ~1.5 us less than a call each


class SeenChatRequest(QuickChatRequest):
    """A :class:`QuickChatRequest` of a body whose messages or tools were looked up before
    validation (:func:`mockoss.harmony.prompt.seen.find_seen`: 8 messages or more, or tools). Its
    ``messages`` and ``tools`` are the body's own lists (valid, extra keys kept), not validated
    copies: the count takes marshal bytes of the body's objects after validation, and a copy
    referencing them would change those bytes (see that module). :meth:`prompt_seen` hands the
    lookup to the prompt count (:func:`mockoss.endpoints.prompt_tokens`).

    The lookup is kept in a slot that pydantic does not manage (set by :func:`quick_validate`
    with ``object.__setattr__``, no field, not compared, not serialised): a pydantic private
    attribute would cost ~1 us more a validation (2.3 against 1.35 us for the agent turn's tail,
    measured), as their initialisation runs for every instance."""

    __slots__ = ("_prompt_seen",)

    def prompt_seen(self) -> Any:
        """The :class:`~mockoss.harmony.prompt.seen.Seen` of the body this request was validated
        from (``validated`` set)."""
        return self._prompt_seen

    def tool_decls(self) -> tuple[ToolDecl, ...]:
        """As for any request, built once per distinct tools list: kept in the memo of their
        validated bytes (equal bytes, equal names; 20 tools: ~2.5 us a view less)."""
        memo = self._prompt_seen.tools_memo
        if memo is None:
            return tuple(map(tool_decl, self.tool_names()))
        decls: tuple[ToolDecl, ...] | None = memo.get("decls")
        if decls is None:
            decls = memo["decls"] = tuple(map(tool_decl, self.tool_names()))
        return decls


def _dict_tool_name(tool: Any) -> str:
    return tool["function"]["name"]  # type: ignore[no-any-return]


_FUNCTION = operator.itemgetter("function")
#: ``QuickChatRequest.model_validate`` without its keyword handling (~0.3 us a call, measured).
_validate_quick = QuickChatRequest.__pydantic_validator__.validate_python
_validate_seen = SeenChatRequest.__pydantic_validator__.validate_python
#: Bodies with fewer messages and no tools are not looked up (the prompt count's ``PREFIX_MIN``:
#: it looks up no prefix of fewer messages either).
_LOOKUP_MESSAGES = 8


@functools.cache
def _seen_functions() -> tuple[Callable[[Any, Any], Any], Callable[[Any], Any]]:
    """``find_seen`` and ``accept_seen`` of :mod:`mockoss.harmony.prompt.seen`, imported on first
    use (it loads the prompt count, and with it openai-harmony: not at this module's import)."""
    from mockoss.harmony.prompt import seen

    return seen.find_seen, seen.accept_seen


def quick_validate(body: Any, max_items: int) -> QuickChatRequest | None:
    """The validated request when ``ChatCompletionRequest`` certainly accepts ``body``, else
    ``None`` (invalid, not plain JSON data, or a list longer than ``max_items``: the caller
    validates with the model, a slice at a time, :mod:`mockoss.server.validation`). Only bodies
    whose ``messages`` and ``tools`` are lists take this path: the model also accepts tuples and
    iterators, and validating an iterator twice would find it consumed.

    A body of :data:`_LOOKUP_MESSAGES` messages or more, or with tools, is first looked up
    (:func:`mockoss.harmony.prompt.seen.find_seen`), and becomes a :class:`SeenChatRequest`: the
    messages of a stored prefix that an accepted request held are not validated again (nor their
    keys checked), nor tools equal to an accepted request's; the rest of the body is, as before.
    This is exact because every item is validated on its own (no validator reads two messages,
    two tools or a position: see :class:`QuickChatRequest`) and equal bytes mean equal data (that
    module's docstring); a refusal still goes to the model, whole. The agent turn of
    ``benchmarks/bench_prompt.py`` (50 messages, 48 seen, 20 tools), in process, same run:
    validation 26 -> 19 us, 14 of them the lookup moved here from the count (45 -> 25 us).
    """
    if type(body) is not dict:
        return None
    messages, tools = body.get("messages"), body.get("tools")
    if tools or (type(messages) is list and len(messages) >= _LOOKUP_MESSAGES):
        return _quick_seen(body, max_items, messages, tools)
    # quick_or_none(body, max_items, ("messages", "tools"), _validate_quick), inline: three calls
    # less on every short request (lists_fit's test on the two lists, then valid_or_none's).
    if (messages is not None and (type(messages) is not list or len(messages) > max_items)) or (
        tools is not None and (type(tools) is not list or len(tools) > max_items)
    ):
        return None
    try:
        request: QuickChatRequest = _validate_quick(body)
    except ValidationError:
        return None
    if not _keys_are_str(messages):  # (a None ``messages`` is invalid: refused above)
        return None
    if tools is not None and not _tool_keys_are_str(tools):
        return None  # (an empty list)
    choice = request.tool_choice
    if choice is not None and tool_usage_problem(choice, request.tools, _dict_tool_name) is not None:
        return None
    return request


def _tool_keys_are_str(tools: Any) -> bool:
    """Every key of every tool and of its ``function`` is a ``str`` (see :func:`keys_are_str`)."""
    return _keys_are_str(tools) and _keys_are_str(map(_FUNCTION, tools))


def _quick_seen(body: dict[str, Any], max_items: int, messages: Any, tools: Any) -> SeenChatRequest | None:
    """:func:`quick_validate` of a body looked up first (many messages, or tools)."""
    if not lists_fit(body, max_items, ("messages", "tools")):
        return None
    find_seen, accept_seen = _seen_functions()
    seen = find_seen(messages, tools)
    checked, new, check_tools = body, messages, tools is not None
    if seen.prefix is not None and seen.prefix.validated:
        new = messages[seen.prefix.length :] or messages[-1:]  # the model needs one message at least
    if seen.tools_validated:
        check_tools = False
    if new is not messages or not check_tools:
        checked = {**body, "messages": new, "tools": tools if check_tools else None}
    request: SeenChatRequest | None = valid_or_none(checked, _validate_seen)
    if request is None or not _keys_are_str(new):  # (a None ``messages`` is invalid: refused above)
        return None
    if check_tools and not _tool_keys_are_str(tools):
        return None
    # The body's own lists, valid (see SeenChatRequest): the validated copies are dropped.
    # Set in the instance dict, as pydantic's own model_construct sets fields.
    request.__dict__.update(messages=messages, tools=tools)
    choice = request.tool_choice
    if choice is not None and tool_usage_problem(choice, tools, _dict_tool_name) is not None:
        return None
    object.__setattr__(request, "_prompt_seen", accept_seen(seen))  # (see SeenChatRequest)
    return request
