"""Run a :class:`MockServer` over HTTP with uvicorn: in the foreground (CLI) or in a thread (pytest)."""

from __future__ import annotations

import gc
import socket
import threading

import uvicorn

from mockoss.server.app import create_app
from mockoss.server.core import MockServer

__all__ = ["ThreadedServer", "bind", "serve_forever"]


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """Bind a listening TCP socket; port 0 picks a free port.

    Raises:
        OSError: the address is in use or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _config(server: MockServer, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(create_app(server), log_level=log_level, access_log=False, lifespan="off")


def serve_forever(server: MockServer, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve until interrupted (Ctrl-C)."""
    config = _config(server, log_level)
    # Everything loaded so far (encoding, scenarios, app) lives for the whole process: move it out
    # of the garbage collector's sight so collections stay short under load.
    gc.collect()
    gc.freeze()
    uvicorn.Server(config).run(sockets=[sock])


class ThreadedServer:
    """A uvicorn server on a free loopback port, in a daemon thread.

    Attributes:
        url: ``http://127.0.0.1:PORT``.
        server: the :class:`MockServer` it serves.
    """

    def __init__(self, server: MockServer, host: str = "127.0.0.1") -> None:
        self.server = server
        self._sock = bind(host, 0)
        self.url = base_url(self._sock)
        self._uvicorn = uvicorn.Server(_config(server, "warning"))
        self._uvicorn.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        """Start and wait until the server accepts connections.

        Raises:
            RuntimeError: it did not start within ``timeout`` seconds.
        """
        self._thread.start()
        deadline = threading.Event()
        for _ in range(int(timeout * 100)):
            if self._uvicorn.started:
                return self
            if not self._thread.is_alive():
                break
            deadline.wait(0.01)
        raise RuntimeError(f"mockoss server did not start on {self.url}")

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._uvicorn.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()
