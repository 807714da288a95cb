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
* **One write per short response.** uvicorn writes the status line and headers to the socket on
  ``http.response.start`` and the body on ``http.response.body``: two ``send`` system calls for
  every response, and on loopback each costs as much CPU as the rest of a short request
  (``benchmarks/bench_http.py``). :class:`CoalescingTransport` keeps a response head back until
  the next write (the body, usually in the same event-loop step) or the end of the current
  event-loop iteration, whichever comes first, so that the client receives the same bytes in the
  same order, in one segment where they fit. A stream's head still leaves before its first event
  is due (a paced stream's ``head_ms`` is kept: the head is flushed at the end of the iteration
  that wrote it).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["CoalescingTransport", "timed_protocol"]


class CoalescingTransport:
    """An :class:`asyncio.Transport` that holds back a response head (bytes starting ``HTTP/`` and
    ending with the blank line) until the next :meth:`write`, :meth:`close` or the end of the
    event-loop iteration that wrote it. Every other call goes to ``transport`` unchanged.

    Bytes and their order on the wire are unchanged; only the number of ``send`` calls drops.
    A body that happens to look like a head is merely delayed the same way. Once a response's
    head is out, ``write`` is the underlying transport's own method (a stream's frames pay nothing
    extra) until :meth:`rearm`, which the protocol calls when the response is complete.
    """

    __slots__ = ("__dict__", "_flush_soon", "_head", "_transport")

    def __init__(self, transport: asyncio.BaseTransport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport: Any = transport
        self._head: bytes | None = None
        self._flush_soon = loop.call_soon

    def write(self, data: bytes) -> None:  # asyncio.WriteTransport.write, while a head may come
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head + data)
            self.__dict__["write"] = self._transport.write  # the head is out: write straight through
        elif data[-4:] == b"\r\n\r\n" and data[:5] == b"HTTP/":
            self._head = data
            self._flush_soon(self.flush)
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

    def close(self) -> None:
        self.flush()
        self._transport.close()

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
    stream included) is never cut by it."""

    class TimedProtocol(base):  # type: ignore[misc, valid-type]
        _mockoss_timer: asyncio.TimerHandle | None = None
        _mockoss_idle_since: float = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(CoalescingTransport(transport, self.loop))
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

        def connection_lost(self, exc: Exception | None) -> None:
            if self._mockoss_timer is not None:
                self._mockoss_timer.cancel()
                self._mockoss_timer = None
            super().connection_lost(exc)

    TimedProtocol.__name__ = TimedProtocol.__qualname__ = f"Timed{base.__name__}"
    return TimedProtocol
