"""The HTTP side of an upstream: requests passed through, or raw completions fetched, without blocking.

One :class:`Proxy` serves one app (:func:`mockoss.server.app.create_app` makes it when the
:class:`~mockoss.server.core.MockServer` has an ``upstream``). It talks to the upstream with one
:class:`httpx2.AsyncClient` (created on first use, closed by the app's lifespan), so waiting for a
real model never blocks the event loop; scripted replies keep going through the synchronous
:meth:`MockServer.respond <mockoss.server.core.MockServer.respond>`.

Pass-through (``mode="pass"``): the request body goes upstream unchanged, with only
``Content-Type`` and ``Accept`` of the client's headers, ``Accept-Encoding: identity`` (so the
bytes relayed are the bytes sent) and ``Authorization: Bearer KEY`` when the upstream has an API
key (the client's own ``Authorization`` is never forwarded). The answer's status, ``Content-Type``,
``Content-Length``, ``Content-Encoding``, ``Retry-After`` and ``X-Request-Id`` and its body are relayed chunk by chunk as
they arrive; a stream the upstream breaks is broken for the client too (no terminating chunk). An
upstream that cannot be reached or times out before answering gives HTTP 502 in the active
profile's error shape: ``mockoss: upstream http://HOST:PORT is unreachable: …``.

Raw mode (``mode="raw"``): see :mod:`mockoss.upstream.raw`; requests mockoss itself rejects
(invalid body, unknown model) are answered without asking the upstream. A big or heavy body
(:func:`mockoss.server.offload.is_heavy`: a big body, a long word, a big batch) takes the route a
scripted one takes (issue 9; the review's eighth session, finding 2: a 50,000-character word held
another client's ``GET /health`` 2-3 s, all of it on the event loop): its check, parse and
``/v1/completions`` body are made on a worker thread, its prompt rendered in the worker process
(:func:`~mockoss.server.offload.render_in_worker`), and its reply made on a worker thread with
those ids as its prompt count (:meth:`Proxy._respond`). Only the wait for the upstream is on the
loop, which it never blocks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Future
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mockoss.endpoints import ENDPOINTS
from mockoss.jsonbody import parse_json
from mockoss.scenario.loader import Step
from mockoss.scenario.replay import KEPT_HEADERS, replay_data
from mockoss.server.offload import Gate, is_heavy, render_in_worker
from mockoss.server.prelock import PRECOUNTED_PROMPT_TOKENS, PROMPT_COUNTER, PROMPT_RENDERER
from mockoss.server.transport import StreamAborted
from mockoss.upstream.raw import UPSTREAM_STATUS, ask_upstream, completion_content, describe, failure

if TYPE_CHECKING:
    from mockoss.profiles.base import Reply
    from mockoss.server.core import MockServer
    from mockoss.server.transport import Delivery
    from mockoss.upstream.config import Upstream

__all__ = ["FORWARDED_HEADERS", "Proxy"]

logger = logging.getLogger("mockoss")

#: Client request headers passed upstream (lower-case); ``Authorization`` comes from the upstream's key only.
FORWARDED_HEADERS = ("content-type", "accept")
#: Upstream response headers relayed to the client besides the body's ``Content-Type``.
_RELAYED = ("content-length", *KEPT_HEADERS)

#: ``done(chunks, abort, times)``: called once the relay ends, with the bytes relayed, why it broke
#: and when each chunk arrived (ms after the request was sent); returns the recording's ticket
#: (done once the exchange is on disk), or ``None``.
Done = Callable[[list[bytes], "str | None", list[float]], "Future[None] | None"]


class _Relay(StreamingResponse):
    """An upstream answer relayed chunk by chunk; the upstream response is closed (and ``done``
    called) however the relay ends: finished, broken upstream, or client gone.

    With ``done`` (recording), each chunk is sent when the next one arrives and the last one only
    once ``done``'s ticket is on disk: a client never holds a whole answer the recording lacks
    (:mod:`mockoss.upstream.record`). The cost: each chunk reaches the client one upstream chunk
    later while recording."""

    def __init__(self, answer: httpx2.Response, done: Done | None, sent: float = 0.0) -> None:
        self._answer, self._done, self._sent = answer, done, sent
        self._chunks: list[bytes] = []
        self._times: list[float] = []  # arrival of each chunk, ms after the request was sent
        self._abort: str | None = None
        self._ticket: Future[None] | None = None
        self._finished = False
        headers = {name: answer.headers[name] for name in _RELAYED if name in answer.headers}
        media_type = answer.headers.get("content-type")
        super().__init__(self._relay(), status_code=answer.status_code, headers=headers, media_type=media_type)

    def _finish(self) -> Future[None] | None:
        if not self._finished and self._done is not None:
            self._finished = True
            self._ticket = self._done(self._chunks, self._abort, self._times)
        return self._ticket

    async def _relay(self) -> AsyncIterator[bytes]:
        held: bytes | None = None
        try:
            async for chunk in self._answer.aiter_raw():
                if self._done is None:
                    yield chunk
                    continue
                self._chunks.append(chunk)
                self._times.append((time.monotonic() - self._sent) * 1000.0)
                if held is not None:
                    yield held
                held = chunk
        except httpx2.HTTPError as exc:
            self._abort = f"the upstream broke the stream: {type(exc).__name__}: {exc}"
        ticket = self._finish()
        if ticket is not None and not ticket.done():
            await asyncio.shield(asyncio.wrap_future(ticket))
        if held is not None:
            yield held
        if self._abort is not None:
            raise StreamAborted(f"mockoss: {self._abort}") from None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self._answer.aclose()
            self._finish()


class Proxy:
    """Talks to ``server.upstream`` for one app.

    Args:
        server: a :class:`~mockoss.server.core.MockServer` whose ``upstream`` is set; its
            ``recorder``, if any, gets every exchange, and its request log every request.

    ``gate``: the app's :class:`~mockoss.server.offload.Gate` (:func:`mockoss.server.app.create_app`
    sets it): its ``offload_bytes`` decides which raw-mode bodies are heavy, and its ``busy``
    counts raw-mode requests on worker threads too, so that a small one never waits on the event
    loop for the server lock a worker thread holds.
    """

    def __init__(self, server: MockServer) -> None:
        if server.upstream is None:
            raise ValueError("Proxy needs a MockServer with an upstream")
        self.server = server
        self.upstream: Upstream = server.upstream
        self._client: httpx2.AsyncClient | None = None
        self.gate = Gate()

    def client(self) -> httpx2.AsyncClient:
        """The shared async client, created on first use (in the serving event loop)."""
        if self._client is None:
            timeout = httpx2.Timeout(self.upstream.timeout_s, connect=self.upstream.connect_timeout_s)
            limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
            self._client = httpx2.AsyncClient(timeout=timeout, limits=limits)
        return self._client

    async def aclose(self) -> None:
        """Close the client and its connections."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    @asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """The app's lifespan: closes the client at shutdown."""
        try:
            yield
        finally:
            await self.aclose()

    def forwards(self, method: str, path: str) -> bool:
        """Whether a non-generation request goes upstream: ``GET /v1/models`` in pass-through and scripted mode."""
        return self.upstream.mode in ("pass", "scripted") and method == "GET" and path == "/v1/models"

    def headers(self, received: Mapping[str, str]) -> dict[str, str]:
        """The headers sent upstream for a request that came with ``received``."""
        out = {name: received[name] for name in FORWARDED_HEADERS if name in received}
        out["accept-encoding"] = "identity"
        if self.upstream.api_key:
            out["authorization"] = f"Bearer {self.upstream.api_key}"
        return out

    async def generate(self, name: str, request: Request) -> Response:
        """Answer generation endpoint ``name`` (e.g. ``"chat"``) from the upstream."""
        raw = await request.body()
        if self.upstream.mode == "raw":
            return await self._raw(name, raw, request.headers)
        if self.upstream.mode == "scripted":
            return await self._scripted(name, raw, request.headers)
        return await self._pass(name, raw, request.headers)

    async def models(self, request: Request) -> Response:
        """``GET /v1/models`` relayed from the upstream (502 if it cannot be reached)."""
        client = self.client()
        outgoing = client.build_request("GET", self.upstream.root + "/v1/models", headers=self.headers(request.headers))
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx2.HTTPError as exc:
            from mockoss.server.responses import to_response

            message = f"mockoss: upstream {self.upstream.safe_url} {describe(exc)}"
            return to_response(self.server.error_reply("chat", UPSTREAM_STATUS, message))
        recorder = self.server.recorder
        if recorder is None or answer.status_code != 200:
            return _Relay(answer, None)

        def listed(chunks: list[bytes], abort: str | None, times: list[float]) -> None:
            # Not a step (a replay answers probes from its profile, taking no step): its ids go
            # into the replay command's --served-model-name (mockoss.upstream.replay_command).
            if abort is None:
                recorder.models_listed(b"".join(chunks))

        return _Relay(answer, listed)

    async def _raw(self, name: str, raw: bytes, headers: Mapping[str, str]) -> Response:
        """Raw mode (:mod:`mockoss.upstream.raw`): the upstream's completion of ``raw``'s prompt,
        surfaced by the active profile. A heavy body (:func:`~mockoss.server.offload.is_heavy`) is
        prepared and answered off the event loop (see the module docstring), and so is every body
        while one is (``gate.busy``), as :class:`~mockoss.server.offload.Gate` does."""
        from mockoss.server.durable import durable, expect_ticket
        from mockoss.server.responses import to_response, to_scheduled_response

        gate = self.gate
        heavy = is_heavy(name, raw, gate.offload_bytes)
        if heavy or gate.busy:
            prepared = await self._off_loop(self._prepare, name, raw, heavy)
        else:
            prepared = self._prepare(name, raw, False)
        step, ids, heavy_answer = None, None, False
        if isinstance(prepared, Step):
            step = prepared
        elif prepared is not None:
            content, ids = prepared
            outgoing = self.headers({"content-type": "application/json", "accept": "application/json"})
            try:
                # A heavy answer (is_heavy of its bytes: 256 KiB, a long word) was read and
                # tokenized off the loop; its reply is surfaced off the loop too (one 50,000-
                # character word's took ~40 ms of loop). The answer's JSON holds the text, at
                # least as many bytes and the same unbroken runs (has_long_run reads escapes), so
                # that one check stands for a second of the text, which the proxy made on the
                # loop before (an encode and a scan of it: issue 9, task O).
                step, heavy_answer = await ask_upstream(self.client(), self.upstream, outgoing, content, gate.threads)
            except BaseException as exc:
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)):
                    raise
                step = self._unbuilt(exc)
        tickets = expect_ticket()
        if heavy or gate.busy or heavy_answer:
            reply, delivery = await self._off_loop(self._respond, name, raw, headers, step, ids)  # ids only when heavy (_prepare)
        else:
            reply, delivery = self.server.respond(name, raw, headers, step=step)
        return durable(to_response(reply) if delivery is None else to_scheduled_response(reply, delivery), tickets)

    def _prepare(self, name: str, raw: bytes, elsewhere: bool) -> Step | tuple[bytes, str | None] | None:
        """What raw mode sends upstream for ``raw``: ``None`` for a request mockoss refuses itself
        (``MockServer.precheck``), a 502 step if the prompt cannot be built, else the
        ``/v1/completions`` body and, with ``elsewhere``, the prompt's ids as the worker process
        rendered them (``"id,id,…"``; ``None``: rendered here, as without a worker)."""
        if self.server.precheck(name, raw) is not None:
            return None
        body = parse_json(raw)  # json.loads' value (mockoss.jsonbody), ~3x faster: 10 MB held the GIL ~36 ms
        model = body.get("model") or self.server.served_model_names[0]
        try:
            ids = render_in_worker(name, raw) if elsewhere else None
            return completion_content(self.upstream, name, body, model, ids), ids
        except BaseException as exc:  # the prompt could not be rendered (pyo3 panics are BaseException)
            if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)):
                raise
            return self._unbuilt(exc)

    def _unbuilt(self, exc: BaseException) -> Step:
        """The 502 step of a request whose prompt could not be built (``exc`` is logged)."""
        logger.error("mockoss: raw upstream request failed", exc_info=exc)
        return failure(self.upstream, f"was not asked: mockoss could not build the prompt: {type(exc).__name__}: {exc}")

    def _respond(self, name: str, raw: bytes, headers: Mapping[str, str], step: Step | None, ids: str | None) -> tuple[Reply, Delivery | None]:
        """``server.respond`` with ``step`` (on a worker thread). With ``ids``, the prompt the
        worker process rendered for a heavy body whose upstream answered: its length is the prompt
        count (``Endpoint.render_prompt``'s length is the count by definition,
        :func:`mockoss.endpoints.prompt_tokens`, as :mod:`mockoss.server.prelock` counts a rendered
        prompt) and a reply carrying the ids (Ollama's ``context``) takes them, so the prompt is
        not rendered a second time, in process under the server lock (~0.9 s holding the GIL for
        10 MB of text); the request's view and declared tools are made before the lock
        (:func:`mockoss.server.prelock.before_lock`)."""
        if ids is None or step is None or step.completion is None:
            return self.server.respond(name, raw, headers, step=step)
        count = PRECOUNTED_PROMPT_TOKENS.set(ids.count(",") + 1 if ids else 0)
        counter = PROMPT_COUNTER.set(lambda endpoint, body: None)  # not called: the count is set
        renderer = PROMPT_RENDERER.set(lambda endpoint, body: ids if (endpoint, body) == (name, raw) else None)
        try:
            return self.server.respond(name, raw, headers, step=step)
        finally:
            PROMPT_RENDERER.reset(renderer)
            PROMPT_COUNTER.reset(counter)
            PRECOUNTED_PROMPT_TOKENS.reset(count)

    async def _off_loop(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)`` on the gate's worker threads, counted in ``gate.busy`` until its thread
        is done (:meth:`Gate.off_loop <mockoss.server.offload.Gate.off_loop>`): daemon threads that
        a stopping server does not wait for, as scripted replies' (``anyio.to_thread`` kept a
        cancelled request waiting for its thread; issue 9, the eleventh session's review, finding 3)."""
        return await self.gate.off_loop(work, *args)

    async def _scripted(self, name: str, raw: bytes, headers: Mapping[str, str]) -> Response:
        """The scenario picks the completion, the upstream engine emits it, its answer is relayed
        as received (see :mod:`mockoss.engines.vllm.sidechannel`). Requests mockoss answers itself
        (invalid, no scenario, scripted errors and replays, exhausted rules) never reach it.

        A heavy body (:func:`~mockoss.server.offload.is_heavy`), and every body while one is in
        flight (``gate.busy``), is played and its upstream body written on a worker thread, as
        scripted replies are (issue 9): 40,000 short messages (1.3 MB) held another client's
        ``GET /health`` 110-150 ms on the loop (found with the review's eighth session, finding 2)."""
        from mockoss.server.responses import to_response

        elsewhere = self.gate.busy > 0 or is_heavy(name, raw, self.gate.offload_bytes)
        if elsewhere:
            reply, log, content = await self._off_loop(self._play, name, raw, headers)
        else:
            reply, log, content = self._play(name, raw, headers)
        if reply is not None:
            return to_response(reply)
        client = self.client()
        outgoing = client.build_request("POST", self.upstream.root + ENDPOINTS[name].path, content=content, headers=self.headers(headers))
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx2.HTTPError as exc:
            message = f"mockoss: upstream {self.upstream.safe_url} {describe(exc)}"
            reply = self.server.error_reply(name, UPSTREAM_STATUS, message)
            await self._log(log, reply.status)
            return to_response(reply)
        await self._log(log, answer.status_code)
        return _Relay(answer, None)

    def _play(self, name: str, raw: bytes, headers: Mapping[str, str]) -> tuple[Reply | None, Callable[[int], Any], bytes]:
        """Scripted mode's :meth:`MockServer.play <mockoss.server.core.MockServer.play>`: mockoss's
        own reply (logged), or ``None``, the log to call with the upstream's status and the body
        sent upstream (the request with the completion's tokens attached)."""
        from mockoss.engines.vllm.sidechannel import attach

        reply, step, log = self.server.play(name, raw, dict(headers))
        if reply is not None:
            log(reply.status)
            return reply, log, b""
        assert step is not None and step.completion is not None
        return None, log, json.dumps(attach(json.loads(raw), step.completion.tokens), ensure_ascii=False).encode()

    async def _log(self, log: Callable[[int], Any], status: int) -> None:
        """``log(status)``, on a worker thread while one may hold the server lock (``gate.busy``)."""
        if self.gate.busy:
            await self._off_loop(log, status)
        else:
            log(status)

    async def _pass(self, name: str, raw: bytes, headers: Mapping[str, str]) -> Response:
        from mockoss.server.responses import to_response

        server, recorder = self.server, self.server.recorder
        slot = recorder.begin() if recorder is not None else -1
        client = self.client()
        outgoing = client.build_request("POST", self.upstream.root + ENDPOINTS[name].path, content=raw, headers=self.headers(headers))
        sent = time.monotonic()
        try:
            answer = await client.send(outgoing, stream=True)
        except BaseException as exc:
            if not isinstance(exc, httpx2.HTTPError):  # cancelled (client gone): nothing to record
                if recorder is not None:
                    recorder.skip(slot)
                raise
            message = f"mockoss: upstream {self.upstream.safe_url} {describe(exc)}"
            reply = server.error_reply(name, UPSTREAM_STATUS, message)
            record = server.record_request(name, raw, headers, reply.status)
            if recorder is not None:
                ticket = recorder.finish(slot, server, record, {"error": {"status": UPSTREAM_STATUS, "message": message}})
                await asyncio.shield(asyncio.wrap_future(ticket))  # on disk before the client has it
            return to_response(reply)
        record = server.record_request(name, raw, headers, answer.status_code)
        if recorder is None:
            return _Relay(answer, None)
        content_type = answer.headers.get("content-type", "application/octet-stream")
        kept = {k: answer.headers[k] for k in KEPT_HEADERS if k in answer.headers}

        def done(chunks: list[bytes], abort: str | None, times: list[float]) -> Future[None] | None:
            try:
                replay = replay_data(answer.status_code, content_type, chunks, kept, abort, chunk_times_ms=times)
                return recorder.finish(slot, server, record, {"replay": replay})
            except Exception:  # never leave the exchange open: flush() would wait for it forever
                logger.exception("mockoss: could not record request %d", record.index)
                recorder.skip(slot)
                return None

        return _Relay(answer, done, sent)
