"""Profile ``llamacpp``: how llama-server (llama.cpp, 2026) surfaces gpt-oss output.

llama.cpp does not use openai-harmony: it detokenises the output and parses the text with its own
grammar. This profile reimplements that parser (:mod:`.gptoss`, the PEG parser of
``common/parsers/gpt-oss.cpp@2629d7b5``; or, with ``parser="regex"``, the late-2025 regex parser of
:mod:`.regex_parser`) and llama-server's reparse-and-diff streaming (:mod:`.plan`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mockoss.harmony import Completion
from mockoss.profiles.base import (
    ChatRequestView,
    Reply,
    RequestContext,
    ResponsesRequestView,
    ServerInfo,
    check_bool_switches,
    check_choice_switches,
)
from mockoss.profiles.llamacpp.lenient import lenient_body as _lenient_body
from mockoss.profiles.llamacpp.options import REASONING_FORMATS, RequestError, parser_for
from mockoss.profiles.llamacpp.plan import Plan, plan_for
from mockoss.profiles.llamacpp.refusals import checked, mark_checked, take_checked
from mockoss.profiles.llamacpp.refusals import request_refusal as _refusal
from mockoss.profiles.llamacpp.wire import error_reply
from mockoss.profiles.memos import template_memo

__all__ = ["LlamacppProfile"]


@dataclass(frozen=True, slots=True)
class LlamacppProfile:
    """llama-server with ``--jinja`` serving a gpt-oss GGUF.

    Attributes:
        parser: ``"peg"`` (2026: the grammar either matches or the turn fails with HTTP 500
            ``The model produced output that does not match the expected peg-native format``) or
            ``"regex"`` (late 2025: unknown headers and non-JSON arguments are skipped, never an
            error; an incomplete header falls back to the whole output as content).
        reasoning_format: the server's ``--reasoning-format`` (``auto`` by default); a request's
            ``reasoning_format`` field overrides it. ``none`` keeps analysis messages, with their
            ``<|channel|>analysis<|message|>`` … ``<|end|>`` markup, in ``content``.
        build_info: ``system_fingerprint`` and ``/props`` ``build_info`` (``b<build>-<commit>``;
            the value is a placeholder, unverified).
        n_ctx: context size per slot, reported by ``/props`` and ``/v1/models``.
        model_path: ``/props`` ``model_path``.
        prompt_tokens_per_second, predicted_tokens_per_second: fixed rates (tokens/s) from which
            ``timings`` are computed, so output is deterministic.
        template_engine: the Jinja engine whose words a chat-template refusal (HTTP 500) carries:
            ``"jinja"`` (from b7756, PR #18462: ``\n------------\nWhile executing CallExpression at
            line L, column C in source:…Error: Jinja Exception: <message>``) or ``"minja"`` (before:
            the message; minja's location suffixes are not reproduced). See
            :mod:`mockoss.profiles.llamacpp.template_checks`.
        template_channel_check: whether the template's check for Harmony markup in an assistant
            ``content`` is in force (``False``: llama.cpp patches it out at load since PR #15243,
            commit fba5c0d6, 2025-08-11; ``True``: launch builds, HTTP 500 ``You have passed a
            message containing <|channel|> tags in the content field…``, ggml-org/llama.cpp#15091).
            On the timeline at b6301, a build known to postdate the patch (``llamacpp@b6100``: on).
        thinking_field: which assistant messages get ``reasoning_content`` as the template's
            ``thinking``: ``"always"`` (content dropped beside tool calls; PR #19704, 2026-02-18,
            and common/parsers/gpt-oss.cpp) or ``"with_tool_calls"`` (content kept: content,
            reasoning and tool calls together are a 500 ``Cannot pass both content and thinking…``,
            ggml-org/llama.cpp#17040, anomalyco/opencode#10805).
        prefill_thinking_check: whether a prefill (a trailing assistant message) with
            ``enable_thinking`` on is the 400 ``Assistant response prefill is incompatible with
            enable_thinking.`` (``oaicompat_chat_params_parse``, read at
            ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp), thinking turned on by the
            request's ``chat_template_kwargs.enable_thinking: true`` (the server's default is off
            where the template reads no ``enable_thinking``, ``common_chat_templates_support_enable_thinking``
            at that build). A switch because the build this profile follows is not settled: the
            check may be gone there, and later builds judge the default by the handler's
            ``supports_thinking`` (on for a reasoning format would make every prefill this 400).
        tool_call_opens: when a streamed tool call appears: ``"recipient"`` (at ``" to=functions."``,
            a name prefix or an unnamed call first: common/parsers/gpt-oss.cpp@2629d7b5) or
            ``"header"`` (llama.cpp b9553's grammar, common/chat.cpp:1118-1190: once the whole
            header has parsed, with the whole name; :mod:`.grammar_b9553`).
        parse_error: the words of a failed final parse (HTTP 500, or the stream's error frame):
            ``"format"`` (``The model produced output that does not match the expected peg-native
            format``) or ``"position"`` (b9553: ``Failed to parse input at pos N: <rest of the
            input>``, common/chat.cpp:2529); :func:`.gptoss.failed_parse_message`.
        template_items_check: whether a declared tool whose parameters hold an array without
            ``items`` fails the template (HTTP 500 ``…While executing If at line 12…Error: Function
            is not a bool value``: llama.cpp's Jinja engine, verified at b9553;
            :data:`.template_checks.ARRAY_WITHOUT_ITEMS`). On by default since session 16 (the
            profile rendered it before): no later build is known to fix it (the timeline's note);
            ``false`` renders the array as ``any[]``.
        function_call_item_id: the Responses ``function_call`` item's ids: ``True`` (from
            ggml-org/llama.cpp#24882, 2026-06-21: ``"id":"fc_<id>"`` and ``"call_id":"call_<id>"``,
            in the output and in the stream's ``output_item.added``) or ``False`` (b9553 and
            before: no ``id``, ``"call_id":"fc_<id>"``); :mod:`.responses`.
    """

    #: Model name served when none is configured (the id llama-server reports for ``-hf ggml-org/gpt-oss-20b-GGUF``; a single-model llama-server ignores the request's ``model``).
    default_model: ClassVar[str] = "ggml-org/gpt-oss-20b-GGUF"
    #: Whether a request's ``model`` must be one of the served names.
    model_check: ClassVar[bool] = False

    name: str = "llamacpp"
    endpoints: frozenset[str] = frozenset({"chat", "responses"})
    parser: Literal["peg", "regex"] = "peg"
    reasoning_format: str = "auto"
    build_info: str = "b9000-2629d7b5"
    n_ctx: int = 131072
    model_path: str = "/models/gpt-oss-20b-mxfp4.gguf"
    prompt_tokens_per_second: float = 1000.0
    predicted_tokens_per_second: float = 50.0
    template_engine: Literal["jinja", "minja"] = "jinja"
    template_channel_check: bool = False
    thinking_field: Literal["always", "with_tool_calls"] = "always"
    prefill_thinking_check: bool = True
    tool_call_opens: Literal["recipient", "header"] = "recipient"
    parse_error: Literal["format", "position"] = "format"
    template_items_check: bool = True
    function_call_item_id: bool = True

    def __post_init__(self) -> None:
        if self.parser not in ("peg", "regex"):
            raise ValueError(f"parser must be 'peg' or 'regex', got {self.parser!r}")
        choices = {
            "template_engine": ("jinja", "minja"),
            "thinking_field": ("always", "with_tool_calls"),
            "tool_call_opens": ("recipient", "header"),
            "parse_error": ("format", "position"),
        }
        check_choice_switches(self, choices)
        check_bool_switches(
            self, ("template_channel_check", "prefill_thinking_check", "template_items_check", "function_call_item_id")
        )
        if self.reasoning_format not in REASONING_FORMATS:
            raise ValueError(
                f"reasoning_format must be one of {', '.join(REASONING_FORMATS)}, got {self.reasoning_format!r}"
            )
        for rate in ("prompt_tokens_per_second", "predicted_tokens_per_second"):
            value = getattr(self, rate)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"{rate} must be a positive finite number, got {value!r}")  # (NaN fails too)
        if isinstance(self.n_ctx, bool) or not isinstance(self.n_ctx, int) or self.n_ctx < 1:
            raise ValueError(f"n_ctx must be a positive integer, got {self.n_ctx!r}")
        for text in ("build_info", "model_path"):
            if not isinstance(getattr(self, text), str):
                raise ValueError(f"{text} must be a string, got {getattr(self, text)!r}")  # noqa: TRY004

    def with_switches(self, **switches: Any) -> LlamacppProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def plan(
        self, completion: Completion, body: Any, tool_names: tuple[str, ...], max_tokens: int | None, *, stream: bool
    ) -> Plan:
        """The memoised :class:`~.plan.Plan` of ``completion`` for a request body (with the
        per-token replay when ``stream``).

        Raises:
            RequestError: the request is one llama-server rejects (see :func:`.options.parser_for`).
        """
        choice = parser_for(
            body,
            tool_names,
            reasoning_format=self.reasoning_format,
            parser=self.parser,
            tool_call_opens=self.tool_call_opens,
            parse_error=self.parse_error,
        )
        return plan_for(completion, max_tokens, choice.key, choice.parse, stream=stream, partials=choice.partials)

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`chat` or :meth:`responses`."""
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            return self.responses(completion, request, ctx)
        raise ValueError(f"profile llamacpp does not serve endpoint {endpoint!r}")

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``; see :func:`mockoss.profiles.llamacpp.chat.surface_chat`.

        What llama-server refuses before generating (:meth:`request_refusal`: the message checks'
        400s, then the gpt-oss chat template's 500s, :meth:`template_refusal`) is answered first,
        as the server core answers it before drawing a step."""
        from mockoss.profiles.llamacpp.chat import surface_chat

        if take_checked(self, "chat", request.body) is None and (refused := _refusal(self, "chat", request.body)):
            return error_reply(*refused)
        tools = tuple(t.name for t in request.tools if t.type == "function" and t.name)
        try:
            plan = self.plan(completion, request.body, tools, request.max_tokens, stream=request.stream)
        except RequestError as exc:  # (not reached: _refusal has read the fields parser_for refuses)
            return error_reply(exc.status, exc.message)
        return surface_chat(self, plan, request, ctx, template_memo(completion))

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``; see :func:`mockoss.profiles.llamacpp.responses.surface_responses`.

        The body is converted to a chat body first, with the converter's 400s (e.g.
        ``previous_response_id``: ``llama.cpp does not support 'previous_response_id'.``;
        :func:`mockoss.profiles.llamacpp.responses_input.to_chat_body`), and the converted body
        meets every refusal of the chat route's parse (:func:`.refusals.chat_refusal`), e.g. a
        ``function_call_output`` with no tool call before it (:meth:`template_refusal`: HTTP 500).
        All are :meth:`request_refusal`'s, answered by the server core before it draws a step.
        """
        from mockoss.profiles.llamacpp.responses import surface_responses

        chat_body = take_checked(self, "responses", request.body)
        if chat_body is None:
            refused, chat_body = checked(self, "responses", request.body)
            if refused is not None:
                return error_reply(*refused)
        tools = tuple(sorted(request.function_tool_names, key=_tool_order(request.body)))
        try:
            # The converted messages (they replace a body's own "messages"): a trailing assistant
            # item is prefilled as on the chat route (.options.continuation), nothing else is read.
            body = request.body if chat_body is None else {**request.body, "messages": chat_body["messages"]}
            plan = self.plan(completion, body, tools, request.max_output_tokens, stream=request.stream)
        except RequestError as exc:
            return error_reply(exc.status, exc.message)
        return surface_responses(self, plan, request, ctx, template_memo(completion))

    def lenient_body(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` (a request's parsed JSON object) as llama-server reads its fields, for the
        shared request schema: each field of a JSON type llama-server reads as its default
        (``json_value``) removed, the limit and ``n`` as it reads them; ``body`` itself when
        nothing changes. Called by the server core before the schema; see
        :func:`mockoss.profiles.llamacpp.lenient.lenient_body`."""
        return _lenient_body(endpoint, body)

    def request_refusal(self, endpoint: str, body: Any) -> Reply | None:
        """The error reply llama-server gives ``body`` (the request's parsed JSON) on ``endpoint``
        before generating, else ``None``: its message checks, request-field errors and the chat
        template's refusals, in its order (:func:`.refusals.request_refusal`; HTTP 400 or 500).

        Called by the server core with the request's own profile (its scenario's and header's
        switches applied) before a scripted step is drawn
        (:meth:`mockoss.server.core.MockServer.respond`): a refused request plays no step, as
        llama-server generates nothing for it, and a client's retries of a 500 (the openai SDK
        retries twice) use none up. It still takes a request index, as every request does."""
        refused, chat_body = checked(self, endpoint, body)
        if refused is None:
            mark_checked(self, endpoint, body, chat_body)  # chat/responses need not check it again
            return None
        return error_reply(*refused)

    def template_refusal(self, messages: Any, tools: Any = None) -> str | None:
        """The error message of the gpt-oss template's ``raise_exception`` on chat ``messages`` in
        this build's words (answered as HTTP 500 ``server_error`` before generating), else ``None``;
        with ``template_items_check``, first the engine's error on the request's ``tools``
        (:func:`~.template_checks.tools_refusal`, rendered before the messages); see
        :mod:`mockoss.profiles.llamacpp.template_checks`."""
        from mockoss.profiles.llamacpp.template_checks import error_text, messages_refusal, tools_refusal

        check, field = self.template_channel_check, self.thinking_field
        raised = tools_refusal(tools) if self.template_items_check else None
        raised = raised or messages_refusal(messages, channel_check=check, thinking_field=field)
        return None if raised is None else error_text(raised, self.template_engine)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """llama-server's error body: ``{"error":{"code":N,"message":…,"type":…}}``, status ``N``."""
        return error_reply(status, message)

    def model_not_found(self, model: str) -> Reply:
        """llama-server in router mode (``router_validate_model``): 400 ``model not found``. (A
        single-model llama-server ignores the name; mockoss only answers the names it serves.)"""
        return error_reply(400, "model not found")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """See :func:`mockoss.profiles.llamacpp.identity.probe`."""
        from mockoss.profiles.llamacpp.identity import probe

        return probe(self, method, path, info)

    def side_route(self, method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
        """``/slots``, ``/metrics``, ``/tokenize``, ``/detokenize``, ``/apply-template``; see
        :mod:`mockoss.profiles.llamacpp.side_routes`."""
        from mockoss.profiles.llamacpp.side_routes import side_route

        return side_route(self, method, path, body, info)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """404 ``File Not Found`` for every unknown route and wrong method (cpp-httplib)."""
        from mockoss.profiles.llamacpp.identity import route_error

        return route_error(status, method, path)


def _tool_order(body: Any) -> Any:
    names = [t.get("name") for t in body.get("tools") or () if isinstance(t, dict)]
    return lambda name: names.index(name) if name in names else len(names)
