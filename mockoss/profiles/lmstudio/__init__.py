"""Profile ``lmstudio``: how LM Studio surfaces gpt-oss output.

LM Studio is closed source, so every behaviour here is either documented publicly (cited) or a
documented switch. Output is parsed with openai-harmony's ``StreamableParser`` and classified by
:mod:`.parse`; :mod:`.chat` and :mod:`.responses` write the wire format.
"""

from __future__ import annotations

import dataclasses
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
)
from mockoss.profiles.lmstudio.parse import (
    LmstudioOutput,
    classify_output,
    token_deltas,
)
from mockoss.profiles.memos import template_memo

__all__ = ["LmstudioProfile"]

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}


@dataclass(frozen=True, slots=True)
class LmstudioProfile:
    """LM Studio's OpenAI-compatible server (0.3.2x–0.4.x) serving ``openai/gpt-oss-20b``.

    Attributes:
        strict: openai-harmony ``StreamableParser(strict=…)``; LM Studio's parser is unknown,
            non-strict (a stop token inside a header ends the message) is a reasonable default
            (unverified).
        reasoning_field: where the analysis goes: ``"reasoning"`` (current, reference §4.3),
            ``"reasoning_content"`` (the older "separate reasoning_content" setting,
            anything-llm#4267) or ``"content"`` (earlier releases: reasoning prepended to the
            answer in ``content``, lmstudio-bug-tracker#851, lmstudio-js#388).
        route_error_status: LM Studio answers unknown routes with
            ``{"error":"Unexpected endpoint or method. (GET /x)"}`` and HTTP 200 (observed by
            several clients on 0.4.x); 404 is seen in some reports.
        pretty_json: non-streamed bodies are pretty-printed with two spaces, as curl transcripts
            in LM Studio issues show (unverified).
        max_context_length: ``/api/v0/models`` ``max_context_length``.
        rest_api_v1: the native REST API v1 (``GET /api/v1/models``), LM Studio ≥ 0.4.0; see
            :mod:`mockoss.profiles.lmstudio.rest_v1`.
    """

    #: Model name served when none is configured (LM Studio's model key).
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    #: Whether a request's ``model`` must be one of the served names.
    model_check: ClassVar[bool] = True

    name: str = "lmstudio"
    endpoints: frozenset[str] = frozenset({"chat", "responses", "lmstudio.chat", "lmstudio.completions"})
    strict: bool = False
    reasoning_field: Literal["reasoning", "reasoning_content", "content"] = "reasoning"
    route_error_status: Literal[200, 404] = 200
    pretty_json: bool = True
    max_context_length: int = 131072
    rest_api_v1: bool = True

    def __post_init__(self) -> None:
        if self.reasoning_field not in ("reasoning", "reasoning_content", "content"):
            raise ValueError(f"reasoning_field must be 'reasoning', 'reasoning_content' or 'content', got {self.reasoning_field!r}")
        if self.route_error_status not in (200, 404):
            raise ValueError(f"route_error_status must be 200 or 404, got {self.route_error_status!r}")
        check_bool_switches(self, ("strict", "pretty_json", "rest_api_v1"))
        if isinstance(self.max_context_length, bool) or not isinstance(self.max_context_length, int) or self.max_context_length < 1:
            raise ValueError(f"max_context_length must be a positive integer, got {self.max_context_length!r}")

    def with_switches(self, **switches: Any) -> LmstudioProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def classify(self, completion: Completion, max_tokens: int | None, tools: frozenset[str]) -> tuple[LmstudioOutput, tuple, int, bool]:
        """``(output, token deltas, completion tokens, cut by max_tokens)``, memoised per completion."""
        max_tokens = completion.cap(max_tokens)  # every limit that does not cut the answer shares one entry (Completion.cap)
        key = ("lmstudio", max_tokens, self.strict, tools)
        cached = completion._memo.get(key)
        if cached is None:
            # LM Studio's own parser is unknown; this profile was built and checked against
            # openai-harmony 0.0.8's, which mockoss now emulates on top of oss-harmony
            # (mockoss.harmony.library): a header holding <|channel|> twice parses as it did.
            trace = completion.trace(max_tokens=max_tokens, strict=self.strict, library="openai-harmony-0.0.8")
            emission = completion.emit(max_tokens)
            cached = (classify_output(trace, tools), token_deltas(trace, tools), len(emission.tokens), emission.finish_reason == "length")
            completion._memo[key] = cached
        return cached  # type: ignore[return-value]

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`chat` or :meth:`responses`."""
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            return self.responses(completion, request, ctx)
        if endpoint in ("lmstudio.chat", "lmstudio.completions"):  # REST API v0
            from mockoss.profiles.lmstudio.rest_v0 import surface_v0_chat, surface_v0_completions

            v0 = surface_v0_chat if endpoint == "lmstudio.chat" else surface_v0_completions
            return v0(self, completion, request, ctx)
        raise ValueError(f"profile lmstudio does not serve endpoint {endpoint!r}")

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``; see :func:`mockoss.profiles.lmstudio.chat.surface_chat`.
        With ``tool_choice: "none"`` no tool call survives."""
        from mockoss.profiles.lmstudio.chat import surface_chat

        tools = frozenset(t.name for t in request.tools if t.name) if request.tool_choice != "none" else frozenset()
        output, deltas, tokens, length = self.classify(completion, request.max_tokens, tools)
        reply = surface_chat(self, output, deltas, tokens, length, request, ctx, template_memo(completion))
        return self._with_log(reply, completion, request.max_tokens, tools, request.model)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``; see :func:`mockoss.profiles.lmstudio.responses.surface_responses`.
        A ``previous_response_id`` this server did not store is LM Studio's 400
        (:mod:`mockoss.profiles.lmstudio.responses_input`)."""
        from mockoss.profiles.lmstudio.responses import surface_responses
        from mockoss.profiles.lmstudio.responses_input import previous_response_error

        if (refused := previous_response_error(self, request.body)) is not None:
            return refused
        tools = request.function_tool_names if request.tool_choice != "none" else frozenset()
        output, deltas, tokens, length = self.classify(completion, request.max_output_tokens, tools)
        reply = surface_responses(self, output, deltas, tokens, length, request, ctx, template_memo(completion))
        return self._with_log(reply, completion, request.max_output_tokens, tools, request.model)

    @staticmethod
    def _with_log(reply: Reply, completion: Completion, max_tokens: int | None, tools: frozenset[str], model: str) -> Reply:
        """``reply`` with the server-log lines of the tool calls LM Studio's parser drops
        (:mod:`mockoss.profiles.lmstudio.server_log`, lmstudio-bug-tracker#876), when tools are declared."""
        if not tools:
            return reply
        from mockoss.harmony.encoding import load_encoding
        from mockoss.profiles.lmstudio.server_log import dropped_call_log

        key = ("lmstudio.log", completion.cap(max_tokens), model)  # the emission's lines, once per limit and model
        log = completion._memo.get(key)
        if log is None:
            emitted = completion.emit(max_tokens).tokens
            log = completion._memo[key] = dropped_call_log(load_encoding().decode(list(emitted)), model) if emitted else ()
        return dataclasses.replace(reply, log=reply.log + log) if log else reply  # type: ignore[operator]

    def _body(self, value: Any) -> bytes:
        from mockoss.profiles.lmstudio.chat import render

        return render(self, value)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """An OpenAI-style error body ``{"error":{"message","type","param","code"}}`` (LM Studio's
        exact error bodies are unverified)."""
        kind = _ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
        return Reply(status=status, body=self._body({"error": {"message": message, "type": kind, "param": param, "code": None}}))

    def model_not_found(self, model: str) -> Reply:
        """404 ``Model "X" not found.`` in the error shape above (wording unverified)."""
        return self.error(404, f'Model "{model}" not found. Please load it or check the model identifier.', param="model")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /v1/models`` → ``{"data":[{"id","object":"model","owned_by":"organization_owner"}],
        "object":"list"}`` (as curl transcripts of LM Studio show); ``GET /api/v0/models`` and
        ``GET /api/v0/models/{id}`` → the documented v0 entries
        (lmstudio-ai/docs ``1_developer/2_rest/endpoints.md``). No health route: LM Studio has none."""
        if method != "GET":
            return None
        names = info.served_model_names
        if path == "/v1/models":
            data = [{"id": n, "object": "model", "owned_by": "organization_owner"} for n in names]
            return Reply(status=200, body=self._body({"data": data, "object": "list"}))
        v0 = {n: self._v0_entry(n) for n in names}
        if path == "/api/v0/models":
            return Reply(status=200, body=self._body({"object": "list", "data": list(v0.values())}))
        if path.startswith("/api/v0/models/"):
            entry = v0.get(path[len("/api/v0/models/") :])
            if entry is not None:
                return Reply(status=200, body=self._body(entry))
        return None

    def _v0_entry(self, name: str) -> dict[str, Any]:
        publisher = name.split("/", 1)[0] if "/" in name else "lmstudio-community"
        return {
            "id": name, "object": "model", "type": "llm", "publisher": publisher, "arch": "gpt-oss",
            "compatibility_type": "gguf", "quantization": "MXFP4", "state": "loaded",
            "max_context_length": self.max_context_length,
        }

    def side_route(self, method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
        """``GET /api/v1/models``; see :mod:`mockoss.profiles.lmstudio.rest_v1`."""
        from mockoss.profiles.lmstudio.rest_v1 import side_route

        return side_route(self, method, path, body, info)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """``{"error":"Unexpected endpoint or method. (METHOD /path)"}`` with ``route_error_status``."""
        body = self._body({"error": f"Unexpected endpoint or method. ({method} {path})"})
        return Reply(status=self.route_error_status, body=body)


