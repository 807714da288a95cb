"""Where a :class:`~mockoss.server.core.MockServer` gets its answers when a real server stands behind it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

__all__ = ["DEFAULT_TIMEOUT_S", "MODES", "PROMPT_FORMS", "Upstream", "UpstreamError"]

#: ``pass``: forward requests unchanged and relay the answers; ``raw``: ask the upstream for the raw
#: Harmony completion and surface it through the active profile; ``scripted``: the scenario picks
#: the completion, the upstream (real vLLM with mockoss's scripted model, :mod:`mockoss.engines.vllm`)
#: emits it and its answer is relayed.
MODES = ("pass", "raw", "scripted")
#: How raw mode sends the rendered prompt: o200k_harmony token ids, or their decoded text.
PROMPT_FORMS = ("tokens", "text")
#: Longest wait for the upstream's next bytes, seconds: 10 minutes, the openai SDK's default timeout.
DEFAULT_TIMEOUT_S = 600.0

Mode = Literal["pass", "raw", "scripted"]
PromptForm = Literal["tokens", "text"]


class UpstreamError(ValueError):
    """An upstream setting is invalid (bad URL, unknown mode, unset API key variable)."""


@dataclass(frozen=True, slots=True)
class Upstream:
    """A real OpenAI-compatible gpt-oss server (vLLM, SGLang, llama.cpp…) behind mockoss.

    Attributes:
        url: the server's root, e.g. ``http://127.0.0.1:8000`` (a trailing ``/v1`` is dropped:
            request paths such as ``/v1/chat/completions`` and ``/api/chat`` are appended).
        mode: ``"pass"`` forwards every generation request and ``GET /v1/models`` unchanged and
            relays the answer as received; ``"raw"`` renders the request as a Harmony prompt,
            asks the upstream's ``POST /v1/completions`` for the raw completion (special tokens
            kept) and surfaces it through the active profile; ``"scripted"`` plays the scenario
            step, sends the request with the step's completion tokens in its side channel
            (:mod:`mockoss.engines.vllm.sidechannel`) and relays the answer as received.
        api_key: sent as ``Authorization: Bearer KEY``; never logged, never recorded, not in ``repr``.
        model: raw mode: the model name sent upstream (default: the request's, else the first
            served name).
        timeout_s: longest wait for the upstream's next bytes, seconds.
        connect_timeout_s: longest wait for a connection, seconds.
        prompt: raw mode: send the prompt as ``"tokens"`` (o200k_harmony ids: exact, vLLM and
            llama.cpp accept them) or ``"text"`` (decoded, special tokens as text; for servers
            that take text only, whose tokenizer must then read ``<|start|>`` as one token).

    Raises:
        UpstreamError: at construction, for a URL that is not ``http(s)://HOST[:PORT][/PATH]``, an
            unknown mode or prompt form, or a timeout that is not positive.
    """

    url: str
    mode: Mode = "pass"
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    connect_timeout_s: float = 10.0
    prompt: PromptForm = "tokens"

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        try:
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
        except ValueError:
            raise UpstreamError(f"upstream URL has an invalid port: {_safe(self.url)!r}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UpstreamError(f"upstream URL must be http(s)://HOST[:PORT], got {_safe(self.url)!r}")
        if self.mode not in MODES:
            raise UpstreamError(f"unknown upstream mode {self.mode!r}; modes: {', '.join(MODES)}")
        if self.prompt not in PROMPT_FORMS:
            raise UpstreamError(f"unknown prompt form {self.prompt!r}; forms: {', '.join(PROMPT_FORMS)}")
        if not (self.timeout_s > 0 and self.connect_timeout_s > 0):
            raise UpstreamError("upstream timeouts must be positive (seconds)")

    @classmethod
    def from_env(cls, url: str, *, api_key_env: str | None = None, **options: object) -> Upstream:
        """An :class:`Upstream` whose API key is read from the environment variable ``api_key_env``.

        Raises:
            UpstreamError: the variable is not set (or empty), or see the class.
        """
        key = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise UpstreamError(f"--upstream-api-key-env: environment variable {api_key_env} is not set")
        return cls(url, api_key=key, **options)  # type: ignore[arg-type]

    @property
    def root(self) -> str:
        """The URL paths are appended to: no trailing ``/`` or ``/v1``."""
        root = self.url.rstrip("/")
        return root.removesuffix("/v1").rstrip("/")

    @property
    def safe_url(self) -> str:
        """:attr:`root` without any ``user:password@`` part, for messages and recordings."""
        return _safe(self.root)


def _safe(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
