"""The generation endpoints mockoss can serve, by name. No HTTP framework here.

An endpoint ties a URL path to the request schema that validates its body and to the renderer
that counts its prompt tokens. A profile lists the endpoints its server has
(:attr:`~mockoss.profiles.base.Profile.endpoints`); the HTTP layer routes every path below and the
active profile answers a path it does not serve with its server's 404.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from pydantic import BaseModel

logger = logging.getLogger("mockoss")

__all__ = ["ENDPOINTS", "Endpoint", "RequestSchema", "endpoint_for_path"]


class RequestSchema(Protocol):
    """A pydantic request model that can build the profile-facing view of itself."""

    model: str | None

    def view(self, model: str, body: dict[str, Any]) -> Any: ...


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One generation endpoint.

    Attributes:
        name: the key profiles and recorded requests use, e.g. ``"chat"``.
        path: the URL path, e.g. ``"/v1/chat/completions"``.
        schema: the pydantic model validating the JSON body (``model_validate``).
        render_prompt: request body → prompt token ids, for usage counts.
    """

    name: str
    path: str
    schema: type[BaseModel]
    render_prompt: Callable[[Mapping[str, Any]], list[int]]


def _chat_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.harmony.prompt import render_chat_prompt

    return render_chat_prompt(body)


def _responses_prompt(body: Mapping[str, Any]) -> list[int]:
    from mockoss.harmony.prompt import render_responses_prompt

    return render_responses_prompt(body)


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
    from mockoss.schemas.chat import ChatCompletionRequest
    from mockoss.schemas.completions import CompletionRequest
    from mockoss.schemas.ollama import OllamaChatRequest, OllamaGenerateRequest
    from mockoss.schemas.responses import ResponsesRequest

    endpoints = [
        Endpoint("chat", "/v1/chat/completions", ChatCompletionRequest, _chat_prompt),
        Endpoint("responses", "/v1/responses", ResponsesRequest, _responses_prompt),
        Endpoint("completions", "/v1/completions", CompletionRequest, _completions_prompt),
        Endpoint("ollama.chat", "/api/chat", OllamaChatRequest, _ollama_chat_prompt),
        Endpoint("ollama.generate", "/api/generate", OllamaGenerateRequest, _ollama_generate_prompt),
    ]
    return MappingProxyType({e.name: e for e in endpoints})


#: Every endpoint by name (read-only).
ENDPOINTS: Mapping[str, Endpoint] = _build()
_BY_PATH = {e.path: e for e in ENDPOINTS.values()}


def endpoint_for_path(path: str) -> Endpoint | None:
    """The endpoint served at ``path``, else ``None``."""
    return _BY_PATH.get(path)


@functools.lru_cache(maxsize=1024)
def prompt_tokens(name: str, raw: bytes) -> int:
    """Prompt tokens of a raw request body for endpoint ``name``, cached on the exact bytes.

    If openai-harmony cannot render the prompt (its tokenizer panics on some pathological inputs,
    e.g. a single million-character word), the count falls back to ``len(raw) // 4`` and a
    warning is logged, so usage stays deterministic and the request is still answered.
    """
    try:
        return len(ENDPOINTS[name].render_prompt(json.loads(raw)))
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        logger.warning("mockoss: could not render the %s prompt (%s: %s); estimating prompt_tokens", name, type(exc).__name__, exc)
        return max(1, len(raw) // 4)
