"""Profile ``ollama``: how Ollama surfaces gpt-oss output, natively and through its OpenAI layer.

Ollama (``ollama/ollama@fb307609``, v0.33.0-rc2) parses gpt-oss output with its own string-level
Harmony parser (:mod:`~mockoss.profiles.ollama.parser`), not openai-harmony's, and serves it on
``POST /api/chat`` and ``/api/generate`` (:mod:`~mockoss.profiles.ollama.native`, NDJSON streaming
by default) and on ``POST /v1/chat/completions`` and ``/v1/responses``
(:mod:`~mockoss.profiles.ollama.openai_chat`, :mod:`~mockoss.profiles.ollama.responses`).

Ollama names models ``name:tag``: start the server with the name clients send, e.g.
``mockoss serve --profile ollama --served-model-name gpt-oss:20b`` or
``MockServer(profile="ollama", served_model_names=["gpt-oss:20b"])``; a request naming another
model gets Ollama's 404 ``model 'X' not found``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from mockoss.profiles.base import Reply, RequestContext, ServerInfo
from mockoss.profiles.ollama.errors import native_error, openai_error
from mockoss.profiles.ollama.identity import model_not_found, probe, route_error

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["MAX_LOAD_DURATION_MS", "OllamaProfile"]

#: Endpoints served by Ollama's OpenAI-compatible layer (errors in the OpenAI shape).
OPENAI_ENDPOINTS = frozenset({"chat", "responses"})

#: The largest ``load_duration_ms`` (~146 years): ``2**62`` ns, half of Go's ``time.Duration``
#: (int64 ns, ``api.Metrics.LoadDuration``), so that ``total_duration`` (load, prompt and
#: generation time, a Duration too) fits as well, and every ``created_at`` stays a time Go and
#: Python can write (years up to 9999: ``time.Time.MarshalJSON``, :func:`datetime.fromtimestamp`)
#: for any server ``created`` before ~9850. A larger value gave every request an unscripted 500
#: (``year 10056 is out of range``; t18 breaker #4).
MAX_LOAD_DURATION_MS = 2**62 // 1_000_000


@dataclass(frozen=True, slots=True)
class OllamaProfile:
    """Ollama as of ``fb307609`` serving a gpt-oss model (family ``gptoss``, harmony parser).

    Attributes:
        version: what ``GET /api/version`` reports.
        tool_call_error: ``"current"``: a tool call whose arguments do not decode fails with
            ``{"error":"error parsing tool call: raw='…', err=…"}`` (HTTP 500, or an NDJSON line
            once streaming started). ``"v0.11.3"``: Ollama 0.11.3's wrong key, streamed at HTTP 200
            as ``{"error parsing tool call":"<Go error>"}`` (ollama#11781, #11704; PR #11861), and
            non-streamed HTTP 500 ``{"error":"unexpected error format in response"}``.
        token_repeat: Ollama's runner abort of a repeating generation (more than N consecutive
            llama-server events whose ``strings.TrimSpace(content)`` is the same). ``"30-incomplete"``
            (fb3076099, ``llm/llama_server.go:1692-1702``): past 30 repeats it returns nil without the
            ``Done`` callback, so the reply ends early and looks like a success (no ``done`` line,
            ``"done":false``, no finish chunk or ``[DONE]``). ``"100-error"`` (ollama/ollama#18374):
            past 100 repeats it fails with ``prediction aborted, token repeat limit reached`` (HTTP
            500, or an error line once streaming started).
        eval_rate: generated tokens per second (``eval_duration``, the ``created_at`` stamps).
        prompt_eval_rate: prompt tokens per second (``prompt_eval_duration``).
        load_duration_ms: ``load_duration`` in ms, 0 to :data:`MAX_LOAD_DURATION_MS`.
    """

    #: Model name served when none is configured (Ollama's model tag).
    default_model: ClassVar[str] = "gpt-oss:20b"
    #: Whether a request's ``model`` must be one of the served names.
    model_check: ClassVar[bool] = True

    name: str = "ollama"
    endpoints: frozenset[str] = frozenset({"ollama.chat", "ollama.generate", "chat", "responses"})
    version: str = "0.33.0-rc2"
    tool_call_error: Literal["current", "v0.11.3"] = "current"
    token_repeat: Literal["30-incomplete", "100-error"] = "30-incomplete"
    eval_rate: int = 50
    prompt_eval_rate: int = 2000
    load_duration_ms: int = 50

    def __post_init__(self) -> None:
        if self.tool_call_error not in ("current", "v0.11.3"):
            raise ValueError(f"tool_call_error must be 'current' or 'v0.11.3', got {self.tool_call_error!r}")
        if self.token_repeat not in ("30-incomplete", "100-error"):
            raise ValueError(f"token_repeat must be '30-incomplete' or '100-error', got {self.token_repeat!r}")
        if not isinstance(self.version, str) or not self.version:
            raise ValueError(f"version must be a non-empty string, got {self.version!r}")
        for switch in ("eval_rate", "prompt_eval_rate"):
            value = getattr(self, switch)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{switch} must be a positive integer (tokens/s), got {value!r}")
        load = self.load_duration_ms
        if isinstance(load, bool) or not isinstance(load, int) or not 0 <= load <= MAX_LOAD_DURATION_MS:
            raise ValueError(
                f"load_duration_ms must be an integer from 0 to {MAX_LOAD_DURATION_MS} (ms: load_duration is a "
                f"Go time.Duration, int64 ns, and total_duration adds the prompt's and the generation's time), got {load!r}"
            )

    def with_switches(self, **switches: Any) -> OllamaProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def for_endpoint(self, endpoint: str) -> Any:
        """The profile as seen from ``endpoint``: on ``/v1`` endpoints, errors take the OpenAI
        shape (Ollama's ``middleware/openai.go`` rewrites them)."""
        return _openai_scope(self) if endpoint in OPENAI_ENDPOINTS else self

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to the native, Chat Completions or Responses writer.

        Raises:
            ValueError: an endpoint this profile does not serve.
        """
        if endpoint in ("ollama.chat", "ollama.generate"):
            from mockoss.profiles.ollama.format_check import format_note
            from mockoss.profiles.ollama.native import surface_native_chat, surface_native_generate

            native = surface_native_chat if endpoint == "ollama.chat" else surface_native_generate
            reply = native(self, completion, request, ctx)
            note = format_note(completion, request.body)  # structured outputs: see format_check
            return reply if note is None else dataclasses.replace(reply, log=reply.log + (note,))
        if endpoint in OPENAI_ENDPOINTS and ctx.raw_body:  # a server's request: Ollama's own prompt count
            from mockoss.profiles.ollama.prompt import openai_prompt_tokens

            prompt = openai_prompt_tokens(endpoint, request.body, ctx.prompt_tokens, ctx.raw_body)
            if prompt != ctx.prompt_tokens:
                ctx = dataclasses.replace(ctx, prompt_tokens=prompt)
        if endpoint == "chat":
            from mockoss.profiles.ollama.openai_chat import surface_openai_chat

            return surface_openai_chat(self, completion, request, ctx)
        if endpoint == "responses":
            from mockoss.profiles.ollama.responses import surface_ollama_responses

            return surface_ollama_responses(self, completion, request, ctx)
        raise ValueError(f"profile ollama does not serve endpoint {endpoint!r}")

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """Native routes' ``{"error":"…"}`` (``param`` is not part of Ollama's errors)."""
        return native_error(status, message)

    def model_not_found(self, model: str) -> Reply:
        """HTTP 404 ``{"error":"model 'X' not found"}``."""
        return model_not_found(model, openai=False)

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``/``, ``/api/version``, ``/api/tags``, ``/api/show``, ``/v1/models[/{model}]``; see
        :mod:`~mockoss.profiles.ollama.identity`."""
        return probe(self, method, path, info)

    def side_route(self, method: str, path: str, body: bytes, info: ServerInfo) -> Reply | None:
        """``GET /api/ps``; see :mod:`mockoss.profiles.ollama.side_routes`."""
        from mockoss.profiles.ollama.side_routes import side_route

        return side_route(method, path, body, info)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """gin's ``404 page not found`` / ``405 method not allowed`` (text/plain)."""
        return route_error(status, method, path)


class _OpenAIScope:
    """An :class:`OllamaProfile` answering on ``/v1`` routes: the same replies, OpenAI-shaped errors
    (``{"error":{"message","type","param":null,"code":null}}``)."""

    __slots__ = ("_profile", "endpoints", "name")
    default_model: ClassVar[str] = "gpt-oss:20b"
    model_check: ClassVar[bool] = True

    def __init__(self, profile: OllamaProfile) -> None:
        self._profile = profile
        self.name = profile.name
        self.endpoints = profile.endpoints

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        return self._profile.surface(endpoint, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        return openai_error(status, message)

    def model_not_found(self, model: str) -> Reply:
        return model_not_found(model, openai=True)

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        return self._profile.probe(method, path, info)

    def route_error(self, status: int, method: str, path: str) -> Reply:
        return self._profile.route_error(status, method, path)

    def own_prompt_tokens(self, endpoint: str, body: Any, raw: bytes, harmony: Callable[[], int]) -> int:
        """``ctx.prompt_tokens`` for the server core (:meth:`mockoss.profiles.base.Profile.own_prompt_tokens`):
        Ollama's own prompt count (:func:`~mockoss.profiles.ollama.prompt.openai_prompt_tokens`,
        the count :meth:`OllamaProfile.surface` makes), the Harmony count ``harmony()`` only where
        that one falls back to it; still made for a chat of ``PREFIX_MIN`` messages or more,
        whose stored leading messages the next turn's validation skips
        (:func:`mockoss.harmony.prompt.seen.find_seen`)."""
        if endpoint not in OPENAI_ENDPOINTS or not raw:
            return harmony()
        from mockoss.harmony.prompt.count import PREFIX_MIN
        from mockoss.profiles.ollama.prompt import openai_prompt_tokens

        items = body.get("messages" if endpoint == "chat" else "input") if type(body) is dict else None
        if type(items) is list and len(items) >= PREFIX_MIN:
            return openai_prompt_tokens(endpoint, body, harmony(), raw)
        return openai_prompt_tokens(endpoint, body, harmony, raw)

    def lenient_body(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` for the shared schema: a chat ``reasoning_effort`` the schema would refuse
        is left to :meth:`request_refusal` (:func:`~mockoss.profiles.ollama.effort.schema_body`)."""
        from mockoss.profiles.ollama.effort import schema_body

        return schema_body(endpoint, body)

    def request_refusal(self, endpoint: str, body: Any) -> Reply | None:
        """Ollama's 400 for a field of a type Go cannot decode into the prompt's structs, or a
        reasoning effort its OpenAI layer does not take
        (:func:`~mockoss.profiles.ollama.go_decode.decode_refusal`), else ``None``."""
        from mockoss.profiles.ollama.go_decode import decode_refusal

        message = decode_refusal(endpoint, body)
        return None if message is None else openai_error(400, message)


@functools.lru_cache(maxsize=64)
def _openai_scope(profile: OllamaProfile) -> _OpenAIScope:
    return _OpenAIScope(profile)
