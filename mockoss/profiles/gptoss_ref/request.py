"""The gpt-oss reference server's request validation: FastAPI's 422 for a body its models reject.

The route is ``async def generate(body: ResponsesRequest, …)``
(openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py), so FastAPI validates the JSON body
against the pydantic models of openai/gpt-oss@7b58334:gpt_oss/responses_api/types.py and answers
a failure with 422 ``{"detail": exc.errors()}`` (each entry ``type, loc, msg, input[, ctx]``,
``loc`` starting with ``"body"``). The models below declare the same fields, types, defaults and
class names as those of ``types.py`` (the class names appear in pydantic's union locations, e.g.
``["body","input","list[union[Item,…]]",0,"Item","role"]``), so pydantic gives the very entries
the server gives; the code is ours. Checked against the real server (pydantic 2.14.4 on both sides,
FastAPI 0.165) for a wrong ``role``, a non-text ``content``, an unknown item ``type``, an item
without ``role``, a ``function_call`` without ``name``, ``tools``/``tool_choice`` ``null``
(accepted) and a ``tool_choice`` or ``reasoning.effort`` outside their literals
(tests/profiles/test_gptoss_reference.py).

What the models accept that the server's code then trips over is the profile's business, not
this module's (e.g. ``tools: null`` with ``instructions``: ``for tool in body.tools`` raises).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from mockoss.profiles.fastapi_body import body_errors
from mockoss.profiles.wire import rebuild

__all__ = ["ResponsesRequest", "body_error", "validation_errors"]

_STATUS = Literal["in_progress", "completed", "incomplete"]

# The names below are those of types.py on purpose: pydantic writes them into error locations.
# Optional[...] / Union[...] spellings are kept where types.py uses them (same error texts).


class UrlCitation(BaseModel):
    type: Literal["url_citation"]
    end_index: int
    start_index: int
    url: str
    title: str


class TextContentItem(BaseModel):
    type: Union[Literal["text"], Literal["input_text"], Literal["output_text"]]  # noqa: PYI030, UP007
    text: str
    status: Optional[str] = "completed"  # noqa: UP045
    annotations: Optional[list[UrlCitation]] = None  # noqa: UP045


class SummaryTextContentItem(BaseModel):
    type: Literal["summary_text"]
    text: str


class ReasoningTextContentItem(BaseModel):
    type: Literal["reasoning_text"]
    text: str


class ReasoningItem(BaseModel):
    id: str = "rs_1234"
    type: Literal["reasoning"]
    summary: list[SummaryTextContentItem]
    content: Optional[list[ReasoningTextContentItem]] = []  # noqa: UP045


class Item(BaseModel):
    id: Optional[str] = None  # noqa: UP045
    type: Optional[Literal["message"]] = "message"  # noqa: UP045
    role: Literal["user", "assistant", "system"]
    content: Union[list[TextContentItem], str]  # noqa: UP007
    status: Union[_STATUS, None] = None  # noqa: UP007


class FunctionCallItem(BaseModel):
    type: Literal["function_call"]
    name: str
    arguments: str
    status: _STATUS = "completed"
    id: str = "fc_1234"
    call_id: str = "call_1234"


class FunctionCallOutputItem(BaseModel):
    type: Literal["function_call_output"]
    call_id: str = "call_1234"
    output: str


class WebSearchActionSearch(BaseModel):
    type: Literal["search"]
    query: Optional[str] = None  # noqa: UP045


class WebSearchActionOpenPage(BaseModel):
    type: Literal["open_page"]
    url: Optional[str] = None  # noqa: UP045


class WebSearchActionFind(BaseModel):
    type: Literal["find"]
    pattern: Optional[str] = None  # noqa: UP045
    url: Optional[str] = None  # noqa: UP045


class WebSearchCallItem(BaseModel):
    type: Literal["web_search_call"]
    id: str = "ws_1234"
    status: _STATUS = "completed"
    action: Union[WebSearchActionSearch, WebSearchActionOpenPage, WebSearchActionFind]  # noqa: UP007


class CodeInterpreterOutputLogs(BaseModel):
    type: Literal["logs"]
    logs: str


class CodeInterpreterOutputImage(BaseModel):
    type: Literal["image"]
    url: str


class CodeInterpreterCallItem(BaseModel):
    type: Literal["code_interpreter_call"]
    id: str = "ci_1234"
    status: Literal["in_progress", "completed", "incomplete", "interpreting", "failed"] = "completed"
    code: Optional[str] = None  # noqa: UP045
    container_id: Optional[str] = None  # noqa: UP045
    outputs: Optional[list[Union[CodeInterpreterOutputLogs, CodeInterpreterOutputImage]]] = None  # noqa: UP007, UP045


class FunctionToolDefinition(BaseModel):
    type: Literal["function"]
    name: str
    parameters: dict  # type: ignore[type-arg]
    strict: bool = False
    description: Optional[str] = ""  # noqa: UP045


class BrowserToolConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["browser_search"] | Literal["web_search"]  # noqa: PYI030


class CodeInterpreterToolConfig(BaseModel):
    type: Literal["code_interpreter"]


class ReasoningConfig(BaseModel):
    effort: Literal["low", "medium", "high"] = "low"


_InputItem = Union[Item, ReasoningItem, FunctionCallItem, FunctionCallOutputItem, WebSearchCallItem, CodeInterpreterCallItem]  # noqa: UP007
_Tool = Union[FunctionToolDefinition, BrowserToolConfig, CodeInterpreterToolConfig]  # noqa: UP007


class ResponsesRequest(BaseModel):
    """``types.ResponsesRequest``: the body of ``POST /v1/responses`` (unknown keys ignored)."""

    instructions: Optional[str] = None  # noqa: UP045
    max_output_tokens: Optional[int] = 131072  # noqa: UP045
    input: Union[str, list[_InputItem]]  # noqa: UP007
    model: Optional[str] = "gpt-oss-120b"  # noqa: UP045
    stream: Optional[bool] = False  # noqa: UP045
    tools: Optional[list[_Tool]] = []  # noqa: UP045
    reasoning: Optional[ReasoningConfig] = ReasoningConfig()  # noqa: UP045
    metadata: Optional[dict[str, Any]] = {}  # noqa: UP045
    tool_choice: Optional[Literal["auto", "none"]] = "auto"  # noqa: UP045
    parallel_tool_calls: Optional[bool] = False  # noqa: UP045
    store: Optional[bool] = False  # noqa: UP045
    previous_response_id: Optional[str] = None  # noqa: UP045
    temperature: Optional[float] = 0.0  # noqa: UP045
    include: Optional[list[str]] = None  # noqa: UP045


def _jsonable(value: Any) -> Any:
    """``jsonable_encoder`` for what pydantic puts in an error entry (plain JSON values here):
    mappings with ``str`` keys, lists for tuples, ``str()`` of anything else. Iterative, not
    recursive (:func:`~mockoss.profiles.wire.rebuild`): an entry's ``input`` can be request data
    nested nearly as deep as the body parser allows, and a recursion error here was an unscripted
    500."""
    return rebuild(value, _jsonable_leaf, mapping=Mapping, sequence=(list, tuple), entries=_str_keys)


def _str_keys(item: Mapping[Any, Any]) -> Iterator[tuple[str, Any]]:
    return ((str(key), element) for key, element in item.items())


def _jsonable_leaf(value: Any) -> Any:
    """:func:`_jsonable` of a value that is not a mapping, list or tuple."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


#: Input items validated per call, so that a long ``input`` does not hold the GIL in one piece
#: (see :mod:`mockoss.server.validation`).
SLICE_ITEMS = 500
_ITEMS: TypeAdapter[list[Any]] = TypeAdapter(list[_InputItem])


def _sliced(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with a long ``input`` list already validated, :data:`SLICE_ITEMS` items a call
    (pydantic takes the built items as they are); a body whose items fail is returned as given, so
    that the whole validation reports pydantic's own entries and locations."""
    items = body.get("input")
    if not isinstance(items, list) or len(items) <= SLICE_ITEMS:
        return dict(body)
    built: list[Any] = []
    try:
        for start in range(0, len(items), SLICE_ITEMS):
            built += _ITEMS.validate_python(items[start : start + SLICE_ITEMS], from_attributes=True)
    except ValidationError:
        return dict(body)
    return {**body, "input": built}


def validation_errors(body: Mapping[str, Any]) -> tuple[ResponsesRequest | None, list[dict[str, Any]]]:
    """Validate ``body`` as FastAPI validates the route's ``body: ResponsesRequest``.

    Returns:
        ``(request, [])`` when the body is valid (``request`` holds pydantic's coerced values,
        e.g. ``max_output_tokens: "7"`` → 7), else ``(None, detail)`` with FastAPI's 422
        ``detail`` entries (``type, loc, msg, input[, ctx]``; ``loc`` starts with ``"body"``).
    """
    try:
        return ResponsesRequest.model_validate(_sliced(body), from_attributes=True), []  # as FastAPI validates
    except ValidationError as exc:
        detail = []
        for entry in exc.errors(include_url=False):
            item: dict[str, Any] = {"type": entry["type"], "loc": ["body", *entry["loc"]], "msg": entry["msg"], "input": _jsonable(entry["input"])}
            if "ctx" in entry:
                item["ctx"] = _jsonable(entry["ctx"])
            detail.append(item)
        return None, detail


def body_error(body: Any, raw: bytes | None) -> tuple[int, dict[str, Any]] | None:
    """FastAPI's answer, ``(status, JSON body)``, to a body that is not a JSON object: 422
    ``{"detail": [...]}`` of :func:`mockoss.profiles.fastapi_body.body_errors` (``missing``,
    ``json_invalid``, ``model_attributes_type``; JSON ``null`` as fastapi >= 0.151.0 has it, the
    reference's pin being ``fastapi>=0.116.1``), or 400 ``{"detail":"There was an error parsing the
    body"}``; ``None`` when ``raw`` is unknown and ``body`` is ``None`` (the caller answers).
    Not reproduced: a ``content-type`` that is not JSON (FastAPI then validates the text itself)."""
    errors = body_errors(body, raw)
    if errors is None or isinstance(errors, str):
        return None if errors is None else (400, {"detail": errors})
    detail = [{**entry, "loc": list(entry["loc"]), "input": _jsonable(entry["input"])} for entry in errors]
    return 422, {"detail": detail}
