"""Request schemas of Ollama's native API: ``POST /api/chat`` and ``POST /api/generate``.

As lenient as Ollama's Go structs (``ollama/ollama:api/types.go@fb307609`` ``ChatRequest``,
``GenerateRequest``, ``Message``, ``ThinkValue``): unknown fields are ignored, ``null`` is accepted
wherever Go would leave a zero value, and only what Ollama rejects with 400 is rejected: a wrong
JSON type, a ``think`` other than ``true``/``false``/``"high"``/``"medium"``/``"low"``/``"max"``,
``top_logprobs`` outside 0–20, a missing or empty ``model``, and (generate) ``raw`` together with
``template``, ``system`` or ``context``. The messages differ from Ollama's (mockoss words them as
``Invalid request: …``); the statuses and the ``{"error": "…"}`` shape match.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator, with_config
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict on Python < 3.12

from mockoss.schemas._quick import quick_or_none

__all__ = [
    "OllamaChatRequest",
    "OllamaChatRequestView",
    "OllamaGenerateRequest",
    "OllamaGenerateRequestView",
    "QuickOllamaChatRequest",
    "num_predict",
]

ThinkLevel = Literal["high", "medium", "low", "max"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class OllamaToolCallFunction(_Lenient):
    name: str = ""
    arguments: dict[str, Any] | None = None


class OllamaToolCall(_Lenient):
    id: str | None = None
    function: OllamaToolCallFunction = Field(default_factory=OllamaToolCallFunction)


class OllamaMessage(_Lenient):
    """``api.Message``: ``role`` is lower-cased by Ollama; ``content`` must be a string."""

    role: str = ""
    content: str | None = None
    thinking: str | None = None
    images: list[str] | None = None
    tool_calls: list[OllamaToolCall] | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None


class OllamaToolFunction(_Lenient):
    name: str = ""
    description: str | None = None
    parameters: dict[str, Any] | None = None


class OllamaTool(_Lenient):
    type: str = ""
    function: OllamaToolFunction = Field(default_factory=OllamaToolFunction)


def num_predict(options: Mapping[str, Any] | None) -> int | None:
    """``options.num_predict`` as a token limit: positive → the limit; absent, 0 or negative → none
    (Ollama then generates until a stop token, within a large multiple of the context)."""
    value = (options or {}).get("num_predict")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None  # NaN/inf: Go's decoder refuses them first (mockoss.server.nonfinite)
    limit = int(value)
    return limit if limit > 0 else None


class _Common(_Lenient):
    model: str = Field(min_length=1)
    stream: StrictBool | None = None
    format: Any = None
    keep_alive: Any = None
    options: dict[str, Any] | None = None
    think: StrictBool | ThinkLevel | None = None
    truncate: StrictBool | None = None
    shift: StrictBool | None = None
    logprobs: StrictBool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)


@dataclass(frozen=True, slots=True)
class OllamaChatRequestView:
    """The parts of a ``POST /api/chat`` request that change what the ``ollama`` profile returns.

    Attributes:
        model: ``model`` as sent (echoed in every response).
        tool_names: declared function names, in order (Ollama maps model-side names back to them).
        stream: NDJSON when true; Ollama's native API streams unless ``"stream": false``.
        max_tokens: ``options.num_predict`` when positive.
        prefill: ``"final"``/``"analysis"`` when the last message is an assistant message with
            content / with only thinking (Ollama then parses the output as that message's
            continuation), else ``None``.
        load_only: no messages: Ollama only loads the model (``done_reason: "load"``).
        body: the request as parsed JSON.
    """

    model: str
    tool_names: tuple[str, ...] = ()
    stream: bool = True
    max_tokens: int | None = None
    prefill: Literal["final", "analysis"] | None = None
    load_only: bool = False
    body: Mapping[str, Any] = field(default_factory=dict)


class _OllamaChatFields(_Common):
    """``api.ChatRequest``'s fields, in the order pydantic reports their errors (both models below)."""

    messages: list[OllamaMessage] | None = None
    tools: list[OllamaTool] | None = None

    def _last_message(self) -> tuple[str, str | None, str | None]:
        """The last message's ``role``, ``content`` and ``thinking`` (there is one)."""
        raise NotImplementedError

    def _tool_names(self) -> tuple[str, ...]:
        raise NotImplementedError

    def view(self, model: str, body: dict[str, Any]) -> OllamaChatRequestView:
        """The profile-facing view; ``model`` is the resolved model name."""
        prefill: Literal["final", "analysis"] | None = None
        if self.messages:
            role, content, thinking = self._last_message()
            if role.lower() == "assistant":
                if content:
                    prefill = "final"
                elif thinking:
                    prefill = "analysis"
        return OllamaChatRequestView(
            model=model,
            tool_names=self._tool_names() if self.tools else (),
            stream=self.stream is not False,
            max_tokens=num_predict(self.options),
            prefill=prefill,
            load_only=not self.messages,
            body=body,
        )


class OllamaChatRequest(_OllamaChatFields):
    """``api.ChatRequest``."""

    @staticmethod
    def quick_validate(body: Any, max_items: int) -> QuickOllamaChatRequest | None:
        """The request as a :class:`QuickOllamaChatRequest` when this model certainly accepts
        ``body``, else ``None`` (then :meth:`model_validate` decides, with its own errors)."""
        return quick_validate_chat(body, max_items)

    def _last_message(self) -> tuple[str, str | None, str | None]:
        last = self.messages[-1]  # type: ignore[index]
        return last.role, last.content, last.thinking

    def _tool_names(self) -> tuple[str, ...]:
        return tuple(t.function.name for t in self.tools or ())


# -- the quick path (mockoss.schemas.chat.QuickChatRequest explains it) -------------------------


@with_config(ConfigDict(extra="allow"))
class _ToolCallFunction(TypedDict):
    """:class:`OllamaToolCallFunction`'s fields."""

    name: NotRequired[str]
    arguments: NotRequired[dict[str, Any] | None]


@with_config(ConfigDict(extra="allow"))
class _ToolCall(TypedDict):
    """:class:`OllamaToolCall`'s fields."""

    id: NotRequired[str | None]
    function: NotRequired[_ToolCallFunction]


@with_config(ConfigDict(extra="allow"))
class _Message(TypedDict):
    """:class:`OllamaMessage`'s fields."""

    role: NotRequired[str]
    content: NotRequired[str | None]
    thinking: NotRequired[str | None]
    images: NotRequired[list[str] | None]
    tool_calls: NotRequired[list[_ToolCall] | None]
    tool_name: NotRequired[str | None]
    tool_call_id: NotRequired[str | None]


@with_config(ConfigDict(extra="allow"))
class _ToolFunction(TypedDict):
    """:class:`OllamaToolFunction`'s fields."""

    name: NotRequired[str]
    description: NotRequired[str | None]
    parameters: NotRequired[dict[str, Any] | None]


@with_config(ConfigDict(extra="allow"))
class _Tool(TypedDict):
    """:class:`OllamaTool`'s fields."""

    type: NotRequired[str]
    function: NotRequired[_ToolFunction]


class QuickOllamaChatRequest(_OllamaChatFields):
    """:class:`OllamaChatRequest`'s fields with plain-dict messages and tools: what
    :func:`quick_validate_chat` gives the server.

    A model per message, tool call and tool is most of the model's time (50 messages and 20
    tools: ~80 us under load, ~1/3 of that here). Why "this accepts" implies "``OllamaChatRequest``
    accepts" is :class:`mockoss.schemas.chat.QuickChatRequest`'s argument, simpler here: every
    item is a ``TypedDict`` with the model's fields, types and constraints and, like the model,
    ``extra="allow"`` (Ollama's messages and tools rarely carry unknown keys, so keeping them costs
    little), so pydantic-core runs the same checks, key types included; a ``TypedDict`` takes the
    same containers as a model; there are no model-level validators. A field the model fills
    with a default (``role`` ``""``, a tool's empty ``function``) is absent here; :meth:`view`
    reads it with the same default.
    """

    messages: list[_Message] | None = None  # type: ignore[assignment]
    tools: list[_Tool] | None = None  # type: ignore[assignment]

    def _last_message(self) -> tuple[str, str | None, str | None]:
        last = self.messages[-1]  # type: ignore[index]
        return last.get("role", ""), last.get("content"), last.get("thinking")

    def _tool_names(self) -> tuple[str, ...]:
        return tuple(t["function"].get("name", "") if "function" in t else "" for t in self.tools or ())


#: ``QuickOllamaChatRequest.model_validate`` without its keyword handling.
_validate_quick_chat = QuickOllamaChatRequest.__pydantic_validator__.validate_python


def quick_validate_chat(body: Any, max_items: int) -> QuickOllamaChatRequest | None:
    """The validated request when ``OllamaChatRequest`` certainly accepts ``body``, else ``None``
    (invalid, or a ``messages`` or ``tools`` that is not a list of at most ``max_items``: the
    model also accepts tuples and iterators, which validating twice could consume)."""
    return quick_or_none(body, max_items, ("messages", "tools"), _validate_quick_chat)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class OllamaGenerateRequestView:
    """The parts of a ``POST /api/generate`` request that change what the ``ollama`` profile returns.

    Attributes:
        model: ``model`` as sent.
        stream: NDJSON unless ``"stream": false``.
        raw: ``raw: true``: no template and no harmony parsing (the text comes back as generated,
            special tokens dropped).
        max_tokens: ``options.num_predict`` when positive.
        load_only: empty ``prompt``: Ollama only loads the model (``done_reason: "load"``).
        body: the request as parsed JSON.
    """

    model: str
    stream: bool = True
    raw: bool = False
    max_tokens: int | None = None
    load_only: bool = False
    body: Mapping[str, Any] = field(default_factory=dict)


class OllamaGenerateRequest(_Common):
    """``api.GenerateRequest``."""

    prompt: str | None = None
    suffix: str | None = None
    system: str | None = None
    template: str | None = None
    context: list[StrictInt] | None = None  # Go's []int: a bool or 1.0 is a 400 (t18 fuzz F9)
    raw: StrictBool | None = None
    images: list[str] | None = None

    @model_validator(mode="after")
    def _check_raw(self) -> OllamaGenerateRequest:
        """Ollama: ``raw mode does not support template, system, or context``."""
        if self.raw and (self.template or self.system or self.context):
            raise ValueError("raw mode does not support template, system, or context")
        return self

    def view(self, model: str, body: dict[str, Any]) -> OllamaGenerateRequestView:
        """The profile-facing view; ``model`` is the resolved model name."""
        return OllamaGenerateRequestView(
            model=model,
            stream=self.stream is not False,
            raw=bool(self.raw),
            max_tokens=num_predict(self.options),
            load_only=not self.prompt,
            body=body,
        )
