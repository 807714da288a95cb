"""Profile ``openai``: what a correct server returns for gpt-oss output.

Not an emulation of a particular server: the expected value for gate tests, built from the
behaviour the public fixes converge on (the rules and their sources are in :mod:`.normalize`).
It composes the vLLM profile (current vLLM's classification: ``HarmonyParser``, Responses item
mapping, event order) with fixed switches, hands it the normalised completion, and rewrites the
result into the official OpenAI wire shapes (:mod:`.wire`), keeping current vLLM's ``reasoning``
field on chat messages and deltas.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from mockoss.harmony import Completion
from mockoss.profiles.base import (
    ChatRequestView,
    Reply,
    RequestContext,
    ResponsesRequestView,
    ServerInfo,
)
from mockoss.profiles.openai import stream_memo, wire
from mockoss.profiles.openai.normalize import normalised
from mockoss.profiles.openai.responses_input import responses_input_error
from mockoss.profiles.replay import AsciiIdRecorder
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.request_checks import metadata_error

__all__ = ["OpenAIProfile"]

#: The vLLM configuration the profile reuses: current parser, tools enabled, recipients ignored
#: without tools in Responses, an ``error`` event (not a dropped connection) if a stream fails.
VLLM = VllmProfile(
    strict=True,
    responses_ignore_recipients_without_tools=True,
    enable_auto_tool_choice=True,
    responses_stream_error="error_event",
    flush_raw_recovery=True,
    token_ids_fields=False,
    # OpenAI's ids are not vLLM's; the profile keeps the 32-digit shapes it was written with.
    id_digits=32,
)


@dataclass(frozen=True, slots=True)
class OpenAIProfile:
    """The reference profile: correct surfacing, official wire shapes, no switches.

    Attributes:
        name: ``"openai"``.
        endpoints: ``chat`` and ``responses``.
    """

    #: Model name served when none is configured (the Hugging Face id).
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    #: Whether a request's ``model`` must be one of the served names.
    model_check: ClassVar[bool] = True

    name: str = "openai"
    endpoints: frozenset[str] = frozenset({"chat", "responses"})

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`chat` or :meth:`responses`."""
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            return self.responses(completion, request, ctx)
        raise ValueError(f"profile openai does not serve endpoint {endpoint!r}")

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``: vLLM's chat surfacing of the normalised completion, in
        the official ``chat.completion`` / ``chat.completion.chunk`` shapes. Tool calls are only
        returned for declared tools (no tools ⇒ recipients ignored, the text is content)."""
        view = normalised(completion, request.max_tokens, tools_declared=bool(request.tools))
        reply = VLLM.chat(view, request, ctx)  # type: ignore[arg-type]
        if reply.streamed:
            return stream_memo.chat_frames(reply, request.include_usage, view._memo)
        return wire.chat_body(reply)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """:meth:`_responses`, the reply kept for the routes on stored responses unless the request
        said ``store: false`` (:func:`mockoss.profiles.openai.stored.keep`)."""
        reply = self._responses(completion, request, ctx)
        if reply.status == 200 and ctx.kept is not None:
            from mockoss.profiles.openai.stored import keep

            keep(request.body, reply, ctx.kept)
        return reply

    def _responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``: vLLM's Responses surfacing of the normalised completion, with
        vLLM-only fields removed. ``metadata`` values must be strings, as vLLM's (the openai
        package's own ``Metadata`` type, ``Dict[str, str]``): otherwise a 400. A
        ``previous_response_id`` this server did not store, or a ``function_call_output`` without
        its call, is the API's 400 (:mod:`mockoss.profiles.openai.responses_input`)."""
        if (rejected := metadata_error(request.body.get("metadata"))) is not None:
            return self.error(400, rejected[0], param=rejected[1])
        if (refused := responses_input_error(request.body, ctx.kept)) is not None:
            return refused
        view = normalised(completion, request.max_output_tokens, tools_declared=bool(request.tools))
        if request.stream and stream_memo.slot_free(view, request):
            # vLLM's frames made with slot ids are the same for every request of a shape: their
            # rewrite is memoised, and this request's ids fill the slots (stream_memo).
            ids = AsciiIdRecorder()
            slotted = dataclasses.replace(ctx, ids=ids)  # type: ignore[arg-type]
            reply = VLLM.responses(view, request, slotted)  # type: ignore[arg-type]
            if reply.streamed:
                return stream_memo.responses_frames(reply, ids, ctx, view._memo)
            ctx.ids.skip(len(ids.calls))  # an error reply shows no id; the ids it drew are passed over
            return wire.responses_body(reply)
        reply = VLLM.responses(view, request, ctx)  # type: ignore[arg-type]
        if reply.streamed:
            return wire.responses_frames(reply)
        return wire.responses_body(reply)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """``{"error":{"message","type","param","code":null}}`` with OpenAI's error types."""
        return wire.error_reply(status, message, param=param)

    def model_not_found(self, model: str) -> Reply:
        """OpenAI's 404: ``The model `X` does not exist or you do not have access to it.``,
        code ``model_not_found``."""
        message = f"The model `{model}` does not exist or you do not have access to it."
        return wire.error_reply(404, message, param=None, code="model_not_found")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /v1/models`` → ``{"object":"list","data":[{"id","object":"model","created",
        "owned_by":"openai"}]}``; ``GET /v1/models/{id}`` → that model."""
        if method != "GET":
            return None
        models = {n: {"id": n, "object": "model", "created": info.created, "owned_by": "openai"} for n in info.served_model_names}
        if path == "/v1/models":
            return Reply(status=200, body=wire.dumps({"object": "list", "data": list(models.values())}).encode())
        if path.startswith("/v1/models/") and path[len("/v1/models/") :] in models:
            return Reply(status=200, body=wire.dumps(models[path[len("/v1/models/") :]]).encode())
        return None

    def stored_route(self, method: str, path: str, query: str, kept: Any) -> Reply | None:
        """``GET``/``DELETE /v1/responses/{id}``, ``GET …/input_items``, ``POST …/cancel`` against
        the server's kept responses (another method there: 405); see
        :mod:`mockoss.profiles.openai.stored`."""
        if not path.startswith("/v1/responses/"):
            return None
        from mockoss.profiles.openai.stored import stored_route

        return stored_route(self, method, path, query, kept)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """OpenAI's unknown-URL error: 404 ``Invalid URL (METHOD /path)``
        (405 for a known path with the wrong method)."""
        return wire.error_reply(status, f"Invalid URL ({method} {path})")
