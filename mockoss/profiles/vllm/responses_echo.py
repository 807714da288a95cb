"""The response object vLLM wraps around Responses output (``ResponsesResponse.from_request``).

Moved out of :mod:`mockoss.profiles.vllm.responses`: the echo of the request's fields, serialised
once per distinct request body as text around slots (``id``, ``incomplete``, ``status``, ``usage``,
``limit``), and the usage object. Field orders and sources: see that module's docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.harmony.lru import BytesLRU
from mockoss.profiles.base import RequestContext, ResponsesRequestView
from mockoss.profiles.vllm.chat import _SLOT, _slot  # a slot in a cached template, as chat's bodies have
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["Echo", "echo_templates", "join_echo", "usage_json"]

_SAMPLING_EPS = 1e-5


def _echo_tool(tool: Any, fields: bool = True) -> Any:
    """``FunctionTool`` as dumped (also flattens the chat-style ``{"function": {...}}`` form); with
    ``fields`` (``responses_body_fields``) the newer openai type's ``allowed_callers``, ``async``,
    ``defer_loading`` and ``output_schema`` (null), as vLLM 0.32/0.33 echo them."""
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return tool
    src = tool["function"] if "name" not in tool and isinstance(tool.get("function"), Mapping) else tool
    head = {"name": src.get("name"), "parameters": src.get("parameters"), "strict": src.get("strict"), "type": "function"}
    if not fields:
        return {**head, "description": src.get("description")}
    return {**head, "allowed_callers": None, "async": None, "defer_loading": None, "description": src.get("description"), "output_schema": None}


def _echo_text(text: Any) -> Any:
    """``ResponseTextConfig`` as dumped without ``by_alias``: the JSON-schema key is ``schema_``."""
    if not isinstance(text, Mapping):
        return text
    fmt = text.get("format")
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema", fmt.get("schema_"))
        fmt = {"name": fmt.get("name"), "schema_": schema, "type": "json_schema", "description": fmt.get("description"), "strict": fmt.get("strict")}
    return {"format": fmt, "verbosity": text.get("verbosity")}


def _echo_reasoning(reasoning: Any) -> Any:
    if not isinstance(reasoning, Mapping):
        return reasoning
    return {"effort": reasoning.get("effort"), "generate_summary": reasoning.get("generate_summary"), "summary": reasoning.get("summary")}


#: Echo templates by (raw request body, model, created, switches). ``max_output_tokens`` is a slot
#: (it depends on the prompt's length), so the same body counted differently shares its template.
#: Bounded in bytes (a key holds a whole request body): the shared :class:`BytesLRU`.
_ECHO_TEMPLATES_BYTES = 16 * 1024 * 1024
_ECHO_TEMPLATES: BytesLRU[tuple[tuple[str, ...], tuple[str, ...]]] = BytesLRU(_ECHO_TEMPLATES_BYTES)


def echo_templates(profile: VllmProfile, request: ResponsesRequestView, ctx: RequestContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The response object around ``output``, serialised once per distinct request: the head
    (``{…"object":"response"``) and tail (``"parallel_tool_calls":…}``) as text pieces around the
    slots ``id``, ``incomplete``, ``status``, ``usage`` and ``limit`` (``max_output_tokens``,
    :func:`output_limit`)."""
    legacy = profile.responses_mapping == "2025"
    fields, cache_fields = profile.responses_body_fields and not legacy, profile.responses_prompt_cache_fields and not legacy
    key = (ctx.raw_body, request.model, ctx.created, fields, cache_fields)
    cached = _ECHO_TEMPLATES.get(key) if ctx.raw_body else None
    if cached is not None:
        return cached
    body = request.body
    temperature = float(1.0 if body.get("temperature") is None else body["temperature"])
    top_p = float(1.0 if body.get("top_p") is None else body["top_p"])
    if temperature < _SAMPLING_EPS:  # SamplingParams: greedy forces top_p = 1.0
        top_p = 1.0
    head = {
        "id": _slot("id"),
        "created_at": ctx.created,
        "incomplete_details": _slot("incomplete"),
        "instructions": body.get("instructions"),
        "metadata": body.get("metadata"),
        "model": request.model,
        "object": "response",
    }
    tool_choice = request.tool_choice
    if fields and not body.get("tools") and tool_choice in ("auto", "none"):
        tool_choice = "none"  # ResponsesRequest.check_tool_usage (vllm/entrypoints/openai/responses/protocol.py)
    tail = {
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "temperature": temperature,
        "tool_choice": tool_choice,
        "tools": [_echo_tool(t, fields) for t in body.get("tools") or ()],
        "top_p": top_p,
        "background": bool(body.get("background")),
        "max_output_tokens": _slot("limit"),
        "max_tool_calls": body.get("max_tool_calls"),
        "previous_response_id": body.get("previous_response_id"),
        "prompt": None,
        **(
            {
                "prompt_cache_options": None,
                "prompt_cache_key": body.get("prompt_cache_key"),
                "prompt_cache_retention": body.get("prompt_cache_retention"),
            }
            if cache_fields
            else {}
        ),
        "reasoning": _echo_reasoning(body.get("reasoning")),
        **({"safety_identifier": body.get("safety_identifier")} if cache_fields else {}),
        "service_tier": body.get("service_tier") or "auto",
        "status": _slot("status"),
        "text": _echo_text(body.get("text")),
        "top_logprobs": None,  # logprobs are rejected for gpt-oss, so sampling logprobs is None
        "truncation": body.get("truncation") or "disabled",
        "usage": _slot("usage"),
        "user": body.get("user"),
        **(
            {
                "presence_penalty": float(body.get("presence_penalty") or 0.0),
                "frequency_penalty": float(body.get("frequency_penalty") or 0.0),
                "kv_transfer_params": None,
                "ec_transfer_params": None,
            }
            if fields
            else {}
        ),
        "input_messages": None,
        "output_messages": None,
    }
    templates = (tuple(_SLOT.split(dumps(head)[:-1])), tuple(_SLOT.split(dumps(tail)[1:])))
    if ctx.raw_body:  # the body, and the templates' text (which echoes parts of it)
        _ECHO_TEMPLATES.put(key, templates, len(ctx.raw_body) + sum(map(len, templates[0] + templates[1])))
    return templates


def output_limit(profile: VllmProfile, request: ResponsesRequestView, prompt_tokens: int) -> int:
    """``max_output_tokens`` as echoed: the request's, capped at ``max_model_len - prompt_tokens``
    (the room left; all of it when the request sets none)."""
    room = profile.max_model_len - prompt_tokens
    return room if request.max_output_tokens is None else min(request.max_output_tokens, room)


def usage_json(prompt: str, total: str, output: int, reasoning: int, cache_write: bool) -> str:
    """``ResponseUsage`` as dumped, for ``prompt`` and ``total`` tokens given as JSON text (the
    cached reply of :mod:`mockoss.profiles.vllm.responses_cached` passes slots); with
    ``cache_write`` the ``cache_write_tokens`` detail (vLLM 0.32/0.33). Same text as ``dumps`` of
    the dict, written without building one."""
    cached = '"cached_tokens":0,"cache_write_tokens":0' if cache_write else '"cached_tokens":0'
    return (
        f'{{"input_tokens":{prompt},"input_tokens_details":{{{cached},"input_tokens_per_turn":[{prompt}],'
        f'"cached_tokens_per_turn":[0]}},"output_tokens":{output},"output_tokens_details":{{"reasoning_tokens":{reasoning},'
        f'"tool_output_tokens":0,"output_tokens_per_turn":[{output}],"tool_output_tokens_per_turn":[0]}},"total_tokens":{total}}}'
    )


def join_echo(head: tuple[str, ...], tail: tuple[str, ...], values: Mapping[str, str], output_json: str) -> str:
    """The response object: the echo templates with their slots filled from ``values`` (JSON
    text), around ``"output":`` ``output_json``."""
    # split() with one group alternates text and slot names: text, name, text, name, …, text
    head_json = "".join(values[piece] if i % 2 else piece for i, piece in enumerate(head))
    tail_json = "".join(values[piece] if i % 2 else piece for i, piece in enumerate(tail))
    return f'{head_json},"output":{output_json},{tail_json}'


class Echo:
    """The request-dependent parts of ``ResponsesResponse.from_request`` for one request."""

    __slots__ = ("cache_write", "head", "id", "limit", "prompt", "tail")

    def __init__(self, profile: VllmProfile, request: ResponsesRequestView, ctx: RequestContext) -> None:
        request_id = request.body.get("request_id")  # vLLM's request_id extra param becomes the id
        self.id = dumps(request_id if isinstance(request_id, str) else profile.new_id(ctx.ids, "resp_"))
        self.prompt = ctx.prompt_tokens
        self.limit = dumps(output_limit(profile, request, ctx.prompt_tokens))
        # usage.input_tokens_details.cache_write_tokens (not in the 2025 mapping's dated profiles)
        self.cache_write = profile.responses_body_fields and profile.responses_mapping != "2025"
        self.head, self.tail = echo_templates(profile, request, ctx)

    def render(self, status: str, output_json: str, plan: Any) -> str:
        """The response object JSON; ``plan`` (a ``responses_plan.ResponsesPlan``: ``output_tokens``,
        ``reasoning_tokens``) None means the in-progress one (``usage: null``)."""
        usage = "null"
        if plan is not None:
            n, p = plan.output_tokens, self.prompt
            usage = usage_json(dumps(p), dumps(p + n), n, plan.reasoning_tokens, self.cache_write)
        values = {
            "id": self.id,
            "incomplete": '{"reason":"max_output_tokens"}' if status == "incomplete" else "null",
            "status": dumps(status),
            "usage": usage,
            "limit": self.limit,
        }
        return join_echo(self.head, self.tail, values, output_json)
