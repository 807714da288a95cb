"""What every server profile takes and returns. No FastAPI here.

A profile turns a :class:`~mockoss.harmony.Completion` (through its
:class:`~mockoss.harmony.ParserTrace`) plus a request into a :class:`Reply`: an HTTP status and
either a JSON body or the exact stream frames that server would write.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from mockoss.profiles.response_store import KeptReader, KeptResponses

__all__ = [
    "ChatRequestView",
    "CompletionsRequestView",
    "IdSource",
    "Profile",
    "Reply",
    "RequestContext",
    "ResponsesRequestView",
    "ToolDecl",
    "check_bool_switches",
    "check_choice_switches",
]

JSON_MEDIA_TYPE = "application/json"
SSE_MEDIA_TYPE = "text/event-stream"


@functools.lru_cache(maxsize=64)
def _seed_key(seed: int | str) -> bytes:
    return f"{type(seed).__name__}:{seed}".encode()


@functools.lru_cache(maxsize=64)
def _seed_hasher(seed: int | str) -> Any:
    """A BLAKE2b hasher keyed with ``seed``'s key and fed nothing yet: :meth:`IdSource._digest`
    copies it instead of keying a new one (the key block is compressed once per seed, not once
    per id: 0.43 instead of 0.66 us an id, measured), same digests."""
    return hashlib.blake2b(digest_size=16, key=_seed_key(seed)[:64])


class IdSource:
    """Deterministic ids: the same seed and request index give the same ids in the same order.

    Each id is a keyed BLAKE2b digest of (seed, request index, position), stable across processes
    and Python versions. ``next("chatcmpl-")`` returns the prefix plus 32 lowercase hex digits, the
    shape of vLLM's ``random_uuid()`` (``uuid4().hex``).
    """

    __slots__ = ("_count", "_hasher", "_request")

    def __init__(self, seed: int | str, request_index: int) -> None:
        self._hasher = _seed_hasher(seed)
        self._request = request_index.to_bytes(8, "big")
        self._count = 0

    def _digest(self) -> bytes:
        """``blake2b(request index (8 bytes) + position (4 bytes), digest_size=16, key=seed key)``."""
        self._count += 1
        hasher = self._hasher.copy()
        hasher.update(self._request + self._count.to_bytes(4, "big"))
        return hasher.digest()

    def next(self, prefix: str = "") -> str:
        """Return ``prefix`` + 32 hex digits (:meth:`_digest` inline: a stream of vllm-mlx
        completion chunks draws an id per chunk, 10,682 for a 10,000-token answer)."""
        self._count += 1
        hasher = self._hasher.copy()
        hasher.update(self._request + self._count.to_bytes(4, "big"))
        return prefix + hasher.hexdigest()

    def hex_run(self, count: int) -> list[str]:
        """``[self.next() for _ in range(count)]`` in one loop: the digest state keyed with the
        seed and fed the request index is copied for each draw (BLAKE2b is a stream hash: the same
        digests), and no Python call is made per id. A stream that draws an id per chunk (vllm-mlx
        completions: 10,682 for a 10,000-token answer) pays ~half as much per id."""
        fed = self._hasher.copy()
        fed.update(self._request)
        copy, start = fed.copy, self._count
        self._count = start + count
        out = []
        append = out.append
        for position in range(start + 1, start + count + 1):
            hasher = copy()
            hasher.update(position.to_bytes(4, "big"))
            append(hasher.hexdigest())
        return out

    def skip(self, count: int) -> None:
        """Pass over ``count`` ids without computing them: the ids drawn next are those ``count``
        calls of :meth:`next` would have left (a memoised reply that drew ids it does not show)."""
        self._count += count

    def next16(self, prefix: str = "") -> str:
        """Return ``prefix`` + 16 hex digits: the shape of vLLM 0.32/0.33's ``random_uuid()``
        (``f"{uuid.uuid4().int & MASK_64_BITS:016x}"``, vllm-project/vllm@v0.32.0:vllm/utils/__init__.py)."""
        self._count += 1  # (_digest inline, as in next)
        hasher = self._hasher.copy()
        hasher.update(self._request + self._count.to_bytes(4, "big"))
        return prefix + hasher.digest()[:8].hex()

    def digits(self, count: int) -> str:
        """Return ``count`` decimal digits (Ollama's ``rs_`` ids use 6), ``count`` ≤ 38."""
        return str(int.from_bytes(self._digest(), "big")).zfill(39)[-count:]


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A tool the request declares.

    Attributes:
        type: ``"function"``, ``"mcp"``, ``"web_search_preview"``, ``"code_interpreter"``, …
        name: the function name for function tools; the ``server_label`` for MCP tools; else ``None``.
    """

    type: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequestView:
    """The parts of a ``POST /v1/chat/completions`` request that change what a profile returns.

    Attributes:
        model: the ``model`` field as sent.
        tools: declared tools (``type: function`` entries).
        tool_choice: ``None`` (absent), ``"auto"``, ``"none"``, ``"required"`` or
            ``{"type": "function", "function": {"name": …}}``.
        stream: SSE when true.
        include_usage: ``stream_options.include_usage``.
        continuous_usage_stats: ``stream_options.continuous_usage_stats`` (vLLM extension).
        include_reasoning: vLLM's ``include_reasoning`` (default true).
        max_tokens: ``max_completion_tokens`` or ``max_tokens``, whichever is set, else ``None``.
        body: the validated request as JSON-ready data, for fields a profile echoes.
    """

    model: str
    tools: tuple[ToolDecl, ...] = ()
    tool_choice: str | Mapping[str, Any] | None = None
    stream: bool = False
    include_usage: bool = False
    continuous_usage_stats: bool = False
    include_reasoning: bool = True
    max_tokens: int | None = None
    body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ResponsesRequestView:
    """The parts of a ``POST /v1/responses`` request that change what a profile returns.

    Attributes:
        model: the ``model`` field as sent.
        tools: declared tools of every type (function, mcp, built-ins).
        tool_choice: as sent (default ``"auto"``).
        stream: SSE when true.
        max_output_tokens: token limit, else ``None``.
        body: the validated request as JSON-ready data; the response object echoes
            ``instructions``, ``metadata``, ``parallel_tool_calls``, ``reasoning``, ``temperature``,
            ``top_p``, ``text``, ``tools``, ``tool_choice``, ``truncation``, ``user``, … from it.
    """

    model: str
    tools: tuple[ToolDecl, ...] = ()
    tool_choice: str | Mapping[str, Any] = "auto"
    stream: bool = False
    max_output_tokens: int | None = None
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def function_tool_names(self) -> frozenset[str]:
        """Names of declared ``type: function`` tools."""
        return frozenset(t.name for t in self.tools if t.type == "function" and t.name)


@dataclass(frozen=True, slots=True)
class CompletionsRequestView:
    """The parts of a ``POST /v1/completions`` request (raw text in, raw text out) a profile needs.

    Attributes:
        model: the ``model`` field as sent.
        prompts: one entry per prompt, as text (special tokens kept) or token ids.
        max_tokens: token limit (vLLM's default is 16), or ``None`` for no limit.
        stream: SSE when true.
        include_usage: ``stream_options.include_usage``.
        continuous_usage_stats: ``stream_options.continuous_usage_stats`` (vLLM extension).
        skip_special_tokens: drop special tokens from the returned text (default true).
        include_stop_str_in_output: keep the stop token's text at the end.
        return_token_ids: add ``token_ids`` / ``prompt_token_ids`` to each choice.
        echo: prefix the prompt text to the returned text.
        body: the validated request as JSON-ready data.
    """

    model: str
    prompts: tuple[str | tuple[int, ...], ...] = ("",)
    max_tokens: int | None = 16
    stream: bool = False
    include_usage: bool = False
    continuous_usage_stats: bool = False
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    return_token_ids: bool = False
    echo: bool = False
    body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Per-request facts a profile needs that do not come from the request body.

    Attributes:
        ids: deterministic id source for this request.
        created: unix time in seconds to stamp on objects (fixed per seed, for determinism).
        prompt_tokens: the request rendered as a Harmony prompt, counted in tokens.
        raw_body: the request body as received; a profile may key caches of request-dependent
            output on it (``b""`` when unknown: no caching).
        kept: the server's kept responses (:class:`~mockoss.profiles.response_store.KeptResponses`,
            what a profile emulating a server's response store reads and writes: ``gptoss-reference``)
            for a request the scenario player plays; a read-only
            :class:`~mockoss.profiles.response_store.KeptReader` for a warm-up before the lock;
            ``None`` otherwise (an upstream's answer, a context built outside a server): the
            profile then neither reads nor keeps anything.
    """

    ids: IdSource
    created: int
    prompt_tokens: int
    raw_body: bytes = b""
    kept: KeptResponses | KeptReader | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What goes back on the wire.

    Attributes:
        status: HTTP status code.
        media_type: ``application/json``, ``text/event-stream`` or ``application/x-ndjson``.
        body: the whole body when not streamed.
        frames: the stream, one element per frame as the server writes it (an SSE frame is
            ``data: {…}\\n\\n`` or ``event: T\\ndata: {…}\\n\\n``); empty when not streamed.
        headers: extra response headers.
        abort: when set, the server drops the connection after writing ``frames`` (an incomplete
            chunked body, no terminating frame), as a server does when an exception escapes its
            stream generator after HTTP 200; the text is the exception it would log.
        log: lines the emulated server writes to its own log for this request (LM Studio's
            ``Failed to parse tool call: …`` when it drops a call, lmstudio-bug-tracker#876), or
            notes of mockoss about an option it does not emulate; the request log keeps them
            (``RecordedRequest.server_log``).
    """

    status: int
    media_type: str = JSON_MEDIA_TYPE
    body: bytes = b""
    frames: tuple[bytes, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    abort: str | None = None
    log: tuple[str, ...] = ()

    @property
    def streamed(self) -> bool:
        return self.media_type != JSON_MEDIA_TYPE


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What identity endpoints report about the fake server.

    Attributes:
        served_model_names: model names the server answers to; the first is the default.
        created: unix seconds stamped on objects.
    """

    served_model_names: tuple[str, ...]
    created: int


class Profile(Protocol):
    """A named emulation of one server's way of surfacing gpt-oss output.

    Attributes:
        name: registry name, e.g. ``"vllm"``.
        default_model: served model name when none is configured.
        model_check: whether requests must name a served model.
        endpoints: names of the generation endpoints this server has (see
            :data:`mockoss.endpoints.ENDPOINTS`); any other path gets :meth:`route_error`.
    """

    name: str
    endpoints: frozenset[str]
    #: The model name the server answers to when none is configured, e.g. ``gpt-oss:20b``.
    default_model: ClassVar[str]
    #: Whether a request naming another model is refused (:meth:`model_not_found`).
    model_check: ClassVar[bool]

    def surface(self, endpoint: str, completion: Any, request: Any, ctx: RequestContext) -> Reply:
        """Surface ``completion`` as endpoint ``endpoint``'s output (JSON or a stream)."""
        ...

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """An error reply in this server's error body shape."""
        ...

    def model_not_found(self, model: str) -> Reply:
        """The reply to a request naming a model the server does not serve."""
        ...

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """Answer an identity or health probe (``GET /v1/models``, ``/health``, …), else ``None``."""
        ...

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """This server's reply to an unknown route (404) or a wrong method (405)."""
        ...

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """This server's reply to a generation ``POST`` not sent as ``application/json``, else
        ``None`` (the request goes on to the usual checks). Default: no refusal.

        Called by :func:`mockoss.server.content_type.content_type_reply` before any other check of
        an HTTP request whose ``Content-Type`` is not ``application/json`` (any case, any
        parameters: those never reach it), on the profile answering ``endpoint``
        (``for_endpoint`` applied). Optional: the profile classes do not subclass this protocol,
        so the caller looks the method up (``getattr``) and a class without it refuses nothing.

        Args:
            endpoint: the generation endpoint (``chat``, ``completions``, ``responses``, ...).
            content_type: the header as sent (``text/plain``, ``application/vnd.x+json``), or
                ``None`` for no header or an empty one (FastAPI reads both as none).
            parsed: whether the body parses as JSON.
            raw: the body's bytes (``b""`` when empty).
        """
        return None

    def request_refusal(self, endpoint: str, body: Any) -> Reply | None:
        """This server's reply to a request it refuses before generating (its own message checks,
        a chat template's exception), else ``None``. Default: no refusal.

        Called by :meth:`mockoss.server.core.MockServer.respond` on the request's own profile (its
        scenario's and header's switches applied) after the request passed the usual checks and
        before a scripted step is drawn, or before a completion given from outside (a raw-mode
        upstream's, a golden's replay) is surfaced: a refused request plays no step and its given
        completion is neither logged nor recorded, as the server generated nothing (``llamacpp``: a
        client's retries of a template's 500 use no step up). Optional, as
        :meth:`content_type_refusal` is (looked up with ``getattr``).

        A method that also takes the keyword ``raw`` (the body's bytes) is given it
        (:func:`mockoss.server.profile_hooks.refusal`; SGLang keeps its chat template's outcome
        under them, so a resent body is a lookup).

        Args:
            endpoint: the generation endpoint (``chat``, ``responses``, ...).
            body: the request's parsed JSON (not modified).
        """
        return None

    def own_prompt_tokens(self, endpoint: str, body: Any, raw: bytes, harmony: Callable[[], int]) -> int:
        """The request's ``ctx.prompt_tokens`` when this server counts a prompt otherwise than
        the Harmony render (SGLang: its model's chat template, ``sglang.chat.chat_prompt_tokens``).
        Optional, looked up on the class (:func:`mockoss.server.profile_hooks.prompt_count`):
        without it the server core counts the Harmony prompt (:func:`mockoss.endpoints.prompt_tokens`).
        ``harmony()`` makes that count, for the endpoints and bodies the profile leaves to it; a
        profile defining this hook need not count it at all (issue 9: the core counted it for
        every SGLang chat request, which the profile then replaced). ``surface`` may still
        replace a ``ctx.prompt_tokens`` a direct caller gives it.

        Args:
            endpoint: the generation endpoint.
            body: the request's parsed JSON (not modified).
            raw: its bytes (a cache key).
            harmony: gives the Harmony count (``int`` tokens).
        """
        return harmony()


def check_bool_switches(profile: object, names: Iterable[str]) -> None:
    """Raise ``ValueError("<switch> must be true or false, got <value>")`` for the first of
    ``names`` whose value on ``profile`` is not a ``bool`` (the profiles' ``__post_init__``: a
    switch from ``X-Mockoss-Switch`` or ``--switch`` answers with this text)."""
    for name in names:
        value = getattr(profile, name)
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")  # noqa: TRY004  # as every switch's


def check_choice_switches(profile: object, choices: Mapping[str, tuple[object, ...]]) -> None:
    """Raise ``ValueError("<switch> must be 'a' or 'b', got <value>")`` for the first switch of
    ``choices`` whose value on ``profile`` is not one of its allowed values."""
    for name, allowed in choices.items():
        value = getattr(profile, name)
        if value not in allowed:
            raise ValueError(f"{name} must be {' or '.join(map(repr, allowed))}, got {value!r}")
