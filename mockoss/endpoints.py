"""The generation endpoints mockoss can serve, by name. No HTTP framework here.

An endpoint ties a URL path to the request schema that validates its body and to the renderer
that counts its prompt tokens. A profile lists the endpoints its server has
(:attr:`~mockoss.profiles.base.Profile.endpoints`); the HTTP layer routes every path below and the
active profile answers a path it does not serve with its server's 404.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from mockoss.body_counts import BODY_CACHE_BYTES, COUNTS, body_count

if TYPE_CHECKING:
    from pydantic import BaseModel

logger = logging.getLogger("mockoss")

__all__ = [
    "BODY_CACHE_BYTES",
    "ENDPOINTS",
    "Endpoint",
    "RequestSchema",
    "body_count",
    "clear_prompt_caches",
    "endpoint_for_path",
    "prompt_tokens",
    "request_seen",
    "route_label",
]


class RequestSchema(Protocol):
    """A pydantic request model that can build the profile-facing view of itself."""

    model: str | None

    def view(self, model: str, body: dict[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Endpoint:
    """One generation endpoint.

    Attributes:
        name: the key profiles and recorded requests use, e.g. ``"chat"``.
        path: the URL path, e.g. ``"/v1/chat/completions"``.
        schema_path: where :attr:`schema` lives, ``"module:Model"``.
        render_prompt: request body → prompt token ids, for usage counts.
        count_prompt: request body → ``len(render_prompt(body))`` at the cost of what is new in
            the body (:mod:`mockoss.harmony.prompt.count`), else ``None``; it also takes what
            the validation looked up of the body, or ``None`` (:func:`prompt_tokens`).
        schema: the pydantic model validating the JSON body (``model_validate``). Its module is
            imported on first use (then it is a plain attribute): a served profile builds only
            the request models of the endpoints it is asked for (issue 9, start-up cost).
        prompt_ids_path: for an endpoint whose reply carries the prompt's token ids (Ollama's
            ``/api/generate`` ``context``), ``"module:function"`` of ``request view → the
            context variable the ids go in when rendered before the server lock, or None`` (not
            needed for that request); imported on first use (:attr:`prompt_ids_slot`,
            :mod:`mockoss.server.prelock`). ``None``: the reply carries no prompt ids.
    """

    name: str
    path: str
    schema_path: str
    render_prompt: Callable[[Mapping[str, Any]], list[int]]
    count_prompt: Callable[[Mapping[str, Any], Any], int] | None = None
    prompt_ids_path: str | None = None

    @functools.cached_property
    def prompt_ids_slot(self) -> Callable[[Any], Any] | None:
        if self.prompt_ids_path is None:
            return None
        module, _, function = self.prompt_ids_path.partition(":")
        return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]

    @functools.cached_property
    def schema(self) -> type[BaseModel]:
        module, _, model = self.schema_path.partition(":")
        return getattr(importlib.import_module(module), model)  # type: ignore[no-any-return]


def _chat_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.harmony.prompt import render_chat_prompt

    return render_chat_prompt(body)


def _responses_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.harmony.prompt import render_responses_prompt

    return render_responses_prompt(body)


@functools.cache
def _counter(name: str) -> Any:
    """A counting function of :mod:`mockoss.harmony.prompt.count`, imported on first use and then
    kept (an import statement on every request cost ~0.5 us)."""
    from mockoss.harmony.prompt import count

    return getattr(count, name)


def _chat_count(body: Mapping[str, Any], seen: Any = None) -> int:
    return _counter("count_chat_prompt")(body, seen=seen)  # type: ignore[no-any-return]


def _responses_count(body: Mapping[str, Any], seen: Any = None) -> int:
    return _counter("count_responses_prompt")(body)  # type: ignore[no-any-return]


def _completions_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.schemas.completions import render_completions_prompt

    return render_completions_prompt(body)


def _ollama_chat_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.profiles.ollama.prompt import render_native_chat_prompt

    return render_native_chat_prompt(body)


def _ollama_generate_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.profiles.ollama.prompt import render_native_generate_prompt

    return render_native_generate_prompt(body)


def _build() -> Mapping[str, Endpoint]:
    chat, completions = "mockoss.schemas.chat:ChatCompletionRequest", "mockoss.schemas.completions:CompletionRequest"
    endpoints = [
        Endpoint("chat", "/v1/chat/completions", chat, _chat_prompt, _chat_count),
        Endpoint("responses", "/v1/responses", "mockoss.schemas.responses:ResponsesRequest", _responses_prompt, _responses_count),
        Endpoint("completions", "/v1/completions", completions, _completions_prompt),
        Endpoint("ollama.chat", "/api/chat", "mockoss.schemas.ollama:OllamaChatRequest", _ollama_chat_prompt),
        Endpoint(
            "ollama.generate",
            "/api/generate",
            "mockoss.schemas.ollama:OllamaGenerateRequest",
            _ollama_generate_prompt,
            prompt_ids_path="mockoss.profiles.ollama.native:prompt_ids_slot",
        ),
        # LM Studio's REST API v0 (lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx)
        Endpoint("lmstudio.chat", "/api/v0/chat/completions", chat, _chat_prompt),
        Endpoint("lmstudio.completions", "/api/v0/completions", completions, _completions_prompt),
    ]
    return MappingProxyType({e.name: e for e in endpoints})


#: Every endpoint by name (read-only).
ENDPOINTS: Mapping[str, Endpoint] = _build()
_BY_PATH = {e.path: e for e in ENDPOINTS.values()}


def endpoint_for_path(path: str) -> Endpoint | None:
    """The endpoint served at ``path``, else ``None``."""
    return _BY_PATH.get(path)


#: The whole-body count cache (:mod:`mockoss.body_counts`: its byte budget is
#: :data:`BODY_CACHE_BYTES`), shared with the profiles' own counts (:func:`body_count`).
_counts = COUNTS


_cleared = [0]


def route_label(name: str) -> str:
    """``ollama.chat (POST /api/chat)``: an endpoint name with its route, for messages; an unknown
    name as is."""
    known = ENDPOINTS.get(name)
    return f"{name} (POST {known.path})" if known is not None else name


def clear_prompt_caches() -> None:
    """Forget every cached prompt count: whole bodies (:mod:`mockoss.body_counts`, the
    profiles' own counts there too: SGLang's chat template, Ollama's OpenAI layer), messages in
    :mod:`mockoss.harmony.prompt.count` (``MockServer.reset`` calls this), and, at its next count,
    in the prompt-count worker process (:func:`prompt_cache_generation`)."""
    from mockoss.harmony.prompt.count import clear_caches

    _counts.clear()
    clear_caches()
    _cleared[0] += 1


def prompt_cache_generation() -> int:
    """How many times :func:`clear_prompt_caches` ran in this process: the prompt-count worker
    (:mod:`mockoss.server.prompt_worker`) gets it with every request and clears its own caches
    when it changes."""
    return _cleared[0]


@functools.cache
def _seen_reader(kind: type) -> Callable[[Any], Any] | None:
    """The ``prompt_seen`` method of a request class, if it has one. Read from the class, never
    the instance (a model allowing extra fields would answer a body's own ``prompt_seen`` key),
    and once per class: a miss on a pydantic model class costs ~0.7 us (its metaclass raises)."""
    return getattr(kind, "prompt_seen", None)


def request_seen(request: Any) -> Any:
    """What the validation of ``request`` looked up of its body before validating it (a
    :class:`mockoss.harmony.prompt.prefix.Seen`: the stored prefix of its messages, its tools'
    bytes), else ``None`` (:meth:`mockoss.schemas.chat.SeenChatRequest.prompt_seen`)."""
    prompt_seen = _seen_reader(type(request))
    return prompt_seen(request) if prompt_seen is not None else None


def prompt_tokens(name: str, raw: bytes, body: Any = None, seen: Any = None) -> int:
    """Prompt tokens of a raw request body for endpoint ``name``.

    ``body`` is ``json.loads(raw)`` when the caller has it (saves parsing twice; not modified).
    ``seen``: what the validation looked up of ``body`` (:func:`request_seen` of the validated
    request), whose lookups of resent messages and tools the count then reuses instead of
    repeating them (:class:`mockoss.schemas.chat.SeenChatRequest`: the agent turn's prefix lookup, ~9 us).
    A body sent before costs one lookup from its third time on (cached on the exact bytes from its
    second, bounded by :data:`BODY_CACHE_BYTES`); chat and Responses bodies are otherwise counted
    from per-message counts (:mod:`mockoss.harmony.prompt.count`), so a turn that resends a
    conversation costs about its new messages. A body whose validation found a stored prefix of
    its messages skips the whole-body cache: its count costs the messages after the prefix (all
    found counted, if it was sent before), where hashing the body for the cache key cost ~4 us
    for the 23 KB agent turn, which agents never send twice. If openai-harmony cannot render the
    prompt (its tokenizer panics on some pathological inputs, e.g. a single million-character
    word), the count falls back to ``len(raw) // 4`` and a warning is logged (once per body), so
    usage stays deterministic and the request is still answered.
    """
    resent = seen is not None and seen.prefix is not None
    key = (name, raw)
    if not resent:
        cached = _counts.get(key)
        if cached is not None:
            return cached
    endpoint = ENDPOINTS[name]
    try:
        if body is None:
            body = json.loads(raw)
        count_prompt = endpoint.count_prompt
        if count_prompt is not None:
            count = count_prompt(body, seen)
        else:
            count = len(endpoint.render_prompt(body))
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        if resent and (cached := _counts.get(key)) is not None:
            return cached  # estimated (and warned) before
        logger.warning("mockoss: could not render the %s prompt (%s: %s); estimating prompt_tokens", name, type(exc).__name__, exc)
        return _counts.put(key, max(1, len(raw) // 4), sys.getsizeof(raw))  # warned once per body
    if resent:
        return count
    # Kept from its second sighting on (BytesLRU.offer): most bodies come once, and storing them
    # cost 0.5 us each; a body sent again is counted once more from the per-message caches.
    # raw.__sizeof__() is sys.getsizeof(raw) (bytes are not GC-tracked) without its ~60 ns lookup.
    return _counts.offer(key, count, raw.__sizeof__())
