"""Connection-level behaviour of ``mockoss serve``: uvicorn's HTTP protocol with a deadline for the
request head, and a response head sent in the same write as the first body bytes.

:func:`timed_protocol` subclasses the protocol class uvicorn picked (httptools or h11):

* **Head deadline.** A connection that sends nothing, or half a request line or header block, for
  ``request_timeout_s`` after it opened or after its previous response is closed. uvicorn itself
  closes an idle keep-alive connection only after a response (``timeout_keep_alive``, 5 s) and
  sets no deadline before the first request or inside a half-sent head (uvicorn 0.54
  ``protocols/http/h11_impl.py`` and ``httptools_impl.py``: the keep-alive timer is armed in
  ``on_response_complete`` and cancelled by ``data_received``). One timer per connection checks
  the deadline; a response only records when it ended, so a keep-alive request arms no timer.
* **Write deadline.** A client that takes none of the bytes waiting for it for
  ``request_timeout_s`` has its connection aborted: writing is paused (the transport's buffer over
  its high-water mark) or a close waits for the buffer to drain, and the buffer has not shrunk
  over a whole period. uvicorn has no write timeout of its own (0.54: ``send`` waits on
  ``FlowControl.drain`` for as long as the client does not read), so a client that stopped
  reading held its whole reply in the server for as long as its connection stayed open (issue 9
  review, eighth session, finding 5: 50 such clients of a 12 MB stream, 140 -> 832 MB, unchanged
  past the timeout). The same ``--request-timeout`` bounds the request's arrival and the reply's
  departure: one documented limit on how long a client may stall either way (mockoss's choice; no
  server we emulate settles it). Our own pacing never trips it: a paced stream's writes are small
  and the deadline only runs while bytes wait for the client.
* **One write per short response.** uvicorn writes the status line and headers to the socket on
  ``http.response.start`` and the body on ``http.response.body``: two ``send`` system calls for
  every response, and on loopback each costs as much CPU as the rest of a short request
  (``benchmarks/bench_http.py``). :class:`CoalescingTransport` keeps a response head back until
  the next write (the body, usually in the same event-loop step) or the end of the current
  event-loop iteration, whichever comes first, so that the client receives the same bytes in the
  same order, in one segment where they fit. A stream's head still leaves before its first event
  is due (a paced stream's ``head_ms`` is kept: the head is flushed at the end of the iteration
  that wrote it). The connections of one server share one end-of-iteration flush
  (:class:`HeadFlusher`): one callback per event-loop iteration, not one per response (a short
  response's body always follows its head in the same step, so that callback had nothing to do).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["CoalescingTransport", "HeadFlusher", "timed_protocol"]


class HeadFlusher:
    """Writes the heads that :class:`CoalescingTransport` objects still hold at the end of the event-loop
    iteration that held them: the first head held in an iteration schedules one callback
    (``loop.call_soon``), later ones join its list.

    Why shared: under load one iteration answers many connections' requests, and a short
    response's body follows its head in the same step, so a callback per response (a
    ``call_soon`` handle, run and found idle) was pure cost, ~0.6 us of every short request
    (uvloop, measured); the shared one runs once per iteration, whatever the number of responses.
    """

    __slots__ = ("_held", "_soon")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._soon = loop.call_soon
        self._held: list[CoalescingTransport] | None = None

    def hold(self, transport: CoalescingTransport) -> None:
        """Flush ``transport`` (:meth:`CoalescingTransport.flush`) at the end of this iteration."""
        held = self._held
        if held is None:
            self._held = [transport]
            self._soon(self.run)
        else:
            held.append(transport)

    def run(self) -> None:
        """Flush every transport held since the last run (a head already written is skipped)."""
        held, self._held = self._held, None
        for transport in held or ():
            transport.flush()


class CoalescingTransport:
    """An :class:`asyncio.Transport` that holds back a response head (bytes starting ``HTTP/`` and
    ending with the blank line) until the next :meth:`write`, :meth:`close` or the end of the
    event-loop iteration that wrote it. Every other call goes to ``transport`` unchanged.

    Bytes and their order on the wire are unchanged; only the number of ``send`` calls drops.
    A body that happens to look like a head is merely delayed the same way. Once a response's
    head is out, ``write`` is the underlying transport's own method (a stream's frames pay nothing
    extra) until :meth:`rearm`, which the protocol calls when the response is complete.

    ``flusher``: the :class:`HeadFlusher` shared with the other connections on ``loop`` (default:
    one of its own). ``is_closing`` (asked by uvicorn after every response) is the underlying
    transport's own method, bound once, not looked up through ``__getattr__`` each time.
    """

    __slots__ = ("__dict__", "_flusher", "_head", "_on_close", "_transport")

    def __init__(
        self,
        transport: asyncio.BaseTransport,
        loop: asyncio.AbstractEventLoop,
        on_close: Callable[[], None] | None = None,
        flusher: HeadFlusher | None = None,
    ) -> None:
        self._transport: Any = transport
        self._head: bytes | None = None
        self._flusher = flusher if flusher is not None else HeadFlusher(loop)
        self._on_close = on_close
        self.__dict__["is_closing"] = transport.is_closing

    def write(self, data: bytes) -> None:  # asyncio.WriteTransport.write, while a head may come
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head + data)
            self.__dict__["write"] = self._transport.write  # the head is out: write straight through
        elif data[-4:] == b"\r\n\r\n" and data[:5] == b"HTTP/":
            self._head = data
            self._flusher.hold(self)
        else:
            self._transport.write(data)

    def rearm(self) -> None:
        """Hold the next response's head again (call when a response is complete)."""
        self.__dict__.pop("write", None)

    def flush(self) -> None:
        """Write a held head now (nothing if there is none)."""
        head = self._head
        if head is not None:
            self._head = None
            if not self._transport.is_closing():
                self._transport.write(head)
                self.__dict__["write"] = self._transport.write

    def forget_close_hook(self) -> None:
        """Drop the ``on_close`` callback (once the connection is lost)."""
        self._on_close = None

    def close(self) -> None:
        self.flush()
        self._transport.close()
        if self._on_close is not None:
            self._on_close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._head = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size()) + len(self._head or b"")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def timed_protocol(base: type[Any], request_timeout_s: float) -> type[Any]:
    """``base`` (a uvicorn HTTP protocol class) writing through a :class:`CoalescingTransport` and
    closing connections whose request head is not complete ``request_timeout_s`` seconds after
    the connection opened or the previous response ended. A request being answered (a long
    stream included) is never cut by it; a client that takes none of the bytes waiting for it
    for ``request_timeout_s`` is (the write deadline, see the module docstring)."""
    _flushers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HeadFlusher] = weakref.WeakKeyDictionary()  # one per loop

    class TimedProtocol(base):  # type: ignore[misc, valid-type]
        _mockoss_timer: asyncio.TimerHandle | None = None
        _mockoss_idle_since: float = 0.0
        _mockoss_write_timer: asyncio.TimerHandle | None = None
        _mockoss_stuck_since: float | None = None  # writing paused (buffer full) and nothing taken since
        _mockoss_buffered: int = 0  # bytes waiting in the transport's buffer when last looked at

        def connection_made(self, transport: Any) -> None:
            flusher = _flushers.get(self.loop)
            if flusher is None:
                flusher = _flushers[self.loop] = HeadFlusher(self.loop)
            super().connection_made(CoalescingTransport(transport, self.loop, self._mockoss_closing, flusher))
            self._mockoss_idle_since = now = self.loop.time()
            self._mockoss_timer = self.loop.call_at(now + request_timeout_s, self._mockoss_check)

        def on_response_complete(self) -> None:
            self.transport.rearm()
            super().on_response_complete()
            self._mockoss_idle_since = self.loop.time()

        def _mockoss_check(self) -> None:
            self._mockoss_timer = None
            if self.transport.is_closing():
                return
            cycle = getattr(self, "cycle", None)
            now = self.loop.time()
            if cycle is None or cycle.response_complete:  # no request head received since
                due = self._mockoss_idle_since + request_timeout_s
                if now >= due:
                    self.transport.close()
                    return
            else:  # answering a request: look again a full period after it
                due = now + request_timeout_s
            self._mockoss_timer = self.loop.call_at(due, self._mockoss_check)

        def pause_writing(self) -> None:  # the transport's buffer passed its high-water mark
            super().pause_writing()
            self._mockoss_watch_writes()

        def resume_writing(self) -> None:  # the client read the buffer down to its low-water mark
            super().resume_writing()
            if not self.transport.is_closing():  # a closing transport is watched until it is empty
                self._mockoss_stuck_since = None

        def _mockoss_watch_writes(self) -> None:
            """Start the write deadline: bytes wait for this client (writing paused, or a close
            waiting for the buffer to drain)."""
            if self._mockoss_stuck_since is not None:
                return
            now = self.loop.time()
            self._mockoss_stuck_since, self._mockoss_buffered = now, self.transport.get_write_buffer_size()
            if self._mockoss_write_timer is None:
                self._mockoss_write_timer = self.loop.call_at(now + request_timeout_s, self._mockoss_check_write)

        def _mockoss_closing(self) -> None:
            """The transport was asked to close: if bytes still wait for the client, close() waits
            for them to leave, for ever if the client never reads; watch them."""
            if self.transport.get_write_buffer_size():
                self._mockoss_watch_writes()

        def _mockoss_check_write(self) -> None:
            self._mockoss_write_timer = None
            since = self._mockoss_stuck_since
            if since is None:
                return
            buffered = self.transport.get_write_buffer_size()
            if not buffered:  # all taken (a closing transport is about to report connection_lost)
                self._mockoss_stuck_since = None
                return
            now = self.loop.time()
            if buffered < self._mockoss_buffered:  # the client took some bytes: a new period from now
                self._mockoss_stuck_since = since = now
                self._mockoss_buffered = buffered
            elif now >= since + request_timeout_s:
                # Nothing taken for a whole period: close without flushing (close() would wait for
                # the buffer to drain, which this client never lets happen). uvicorn then reports
                # the disconnect to the app, whose stream ends and lets go of its reply.
                self.transport.abort()
                return
            self._mockoss_write_timer = self.loop.call_at(since + request_timeout_s, self._mockoss_check_write)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._mockoss_timer is not None:
                self._mockoss_timer.cancel()
                self._mockoss_timer = None
            super().connection_lost(exc)  # may call close() again (then nothing is buffered)
            self.transport.forget_close_hook()  # it refers to this protocol: no cycle left behind
            if self._mockoss_write_timer is not None:
                self._mockoss_write_timer.cancel()
                self._mockoss_write_timer = None
            self._mockoss_stuck_since = None

    TimedProtocol.__name__ = TimedProtocol.__qualname__ = f"Timed{base.__name__}"
    return TimedProtocol
