"""The server's side of the prompt worker process (:mod:`mockoss.server.prompt_worker`): one
``python -m mockoss.server.prompt_worker`` subprocess, started on first use, that counts, encodes and
renders prompts on the other core while the server keeps answering (why a process: see
:mod:`mockoss.server.offload`).

Split out of :mod:`mockoss.server.offload` (a pure move). :mod:`~mockoss.server.offload` imports
:func:`count_in_worker`, :func:`encode_in_worker`, :func:`render_in_worker` and :func:`shutdown` and
re-exports them: its own callers (and tests that replace them there) use those names as before.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from array import array

from mockoss.endpoints import prompt_cache_generation
from mockoss.server.prompt_worker import ENCODE_FAILED, PANICKED, PanicException, read_frame, stop_child, write_frame

__all__ = ["ask_in_worker", "count_in_worker", "encode_in_worker", "render_in_worker", "shutdown"]

logger = logging.getLogger("mockoss")


class _Worker:
    """One ``python -m mockoss.server.prompt_worker`` subprocess, used by one thread at a time.

    Started on first use; restarted after it dies. It exits by itself when the server process goes
    away (its stdin closes).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "mockoss.server.prompt_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            )
        return self._process

    def _ask(self, name: bytes, payload: bytes) -> bytes | None:
        """One request to the worker process (:mod:`mockoss.server.prompt_worker` framing), its
        answer, or ``None`` if the worker failed (it is stopped; the next request starts another).
        Blocking (call it on a thread; pipe I/O releases the GIL)."""
        with self._lock:
            process = self._start()
            try:
                write_frame(process.stdin, name + f"\0{prompt_cache_generation()}\0".encode() + payload)  # type: ignore[arg-type]
                answer = read_frame(process.stdout)  # type: ignore[arg-type]
            except OSError:
                answer = None
            if answer is None:
                self.stop()
            return answer

    def count(self, endpoint: str, raw: bytes) -> int | None:
        """:func:`mockoss.endpoints.prompt_tokens` of ``raw``; ``None`` if the worker failed."""
        answer = self._ask(endpoint.encode(), raw)
        return None if answer is None else int(answer)

    @staticmethod
    def _unless_panicked(answer: bytes | None) -> bytes | None:
        """``answer``, unless it reports that openai-harmony's tokenizer panicked in the worker
        (:data:`~mockoss.server.prompt_worker.PANICKED`): then that panic, raised here as
        :class:`~mockoss.server.prompt_worker.PanicException` with its text, which
        :func:`mockoss.server.replies.failure_reply` answers as the panic itself (the same 400).
        The caller used to encode or render again in process to raise it: a 1,000,000-character
        word's panic held the GIL ~90 ms each time (issue 9, review)."""
        if answer is not None and answer[:1] == PANICKED:
            raise PanicException(answer[1:].decode("utf-8", "surrogatepass"))
        return answer

    def encode(self, text: str, special: bool) -> list[int] | None:
        """The token ids of ``text`` (:func:`mockoss.harmony.encoding.encode_text`); ``None`` if
        the worker failed or encoding raised there (``ENCODE_FAILED``: the caller encodes in
        process, which raises the same).

        Raises:
            PanicException: the tokenizer panicked there (:meth:`_unless_panicked`)."""
        answer = self._unless_panicked(self._ask(b"encode" if special else b"encode-plain", text.encode("utf-8", "surrogatepass")))
        if answer is None or answer == ENCODE_FAILED:
            return None
        ids = array("I")
        ids.frombytes(memoryview(answer)[1:])  # after IDS; the same machine's byte order both ends
        return ids.tolist()

    def render(self, endpoint: str, raw: bytes) -> str | None:
        """The prompt token ids of ``raw``, a body for ``endpoint`` (``ENDPOINTS[endpoint].render_prompt``),
        as ``"id,id,…"``; ``None`` if the worker failed or rendering raised there (``ENCODE_FAILED``:
        the caller renders in process, which raises the same).

        Raises:
            PanicException: the tokenizer panicked there (:meth:`_unless_panicked`)."""
        answer = self._unless_panicked(self._ask(b"render", endpoint.encode() + b"\0" + raw))
        return None if answer is None or answer == ENCODE_FAILED else answer.decode("ascii")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_child(process)


_worker = _Worker()


def shutdown() -> None:
    """Stop the worker process, if one was started (a later big request starts a new one)."""
    with _worker._lock:
        _worker.stop()


def count_in_worker(endpoint: str, raw: bytes) -> int | None:
    """:func:`mockoss.endpoints.prompt_tokens` of ``raw``, computed in the worker process; blocking
    (call it on a thread: the pipe I/O releases the GIL).

    Returns ``None`` (count in-process instead) if the worker process cannot be used.
    """
    try:
        counted = _worker.count(endpoint, raw)
    except OSError as exc:  # cannot start it
        logger.warning("mockoss: prompt-count worker unavailable (%s: %s); counting in-process", type(exc).__name__, exc)
        return None
    if counted is None:
        logger.warning("mockoss: the prompt-count worker failed; counting in-process")
    return counted


def encode_in_worker(text: str, special: bool) -> list[int] | None:
    """:func:`mockoss.harmony.encoding.encode_text` of ``text`` in the worker process; blocking
    (on a thread). ``None`` (encode in process instead) if the worker cannot be used or encoding
    raised there. Raises :class:`~mockoss.server.prompt_worker.PanicException` if the tokenizer
    panicked there (the same 400 as the panic in process, without tokenizing again)."""
    try:
        ids = _worker.encode(text, special)
    except OSError as exc:  # cannot start it
        logger.warning("mockoss: prompt-count worker unavailable (%s: %s); tokenizing in-process", type(exc).__name__, exc)
        return None
    return ids


def render_in_worker(endpoint: str, raw: bytes) -> str | None:
    """The prompt token ids of ``raw``, a body for ``endpoint``
    (:attr:`mockoss.endpoints.Endpoint.render_prompt`), rendered in the worker process, as
    ``"id,id,…"`` (decimal, joined there: what Ollama's ``context`` holds); blocking (on a thread).
    ``None`` (render in process instead) if the worker cannot be used or rendering raised there.
    Raises :class:`~mockoss.server.prompt_worker.PanicException` if the tokenizer panicked there
    (the same 400 as the panic in process, without rendering again)."""
    try:
        return _worker.render(endpoint, raw)
    except OSError as exc:  # cannot start it
        logger.warning("mockoss: prompt-count worker unavailable (%s: %s); rendering in-process", type(exc).__name__, exc)
        return None


def ask_in_worker(kind: bytes, payload: bytes) -> bytes | None:
    """The worker process's answer to a request of ``kind`` (a profile's own, such as
    ``gptoss-reference``: :mod:`mockoss.server.prompt_worker`), blocking (on a thread); ``None``
    if the worker cannot be used. Raises :class:`~mockoss.server.prompt_worker.PanicException` if
    the tokenizer panicked there."""
    try:
        return _worker._unless_panicked(_worker._ask(kind, payload))
    except OSError as exc:  # cannot start it
        logger.warning("mockoss: prompt-count worker unavailable (%s: %s); rendering in-process", type(exc).__name__, exc)
        return None
