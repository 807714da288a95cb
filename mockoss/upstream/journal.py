"""An append-only file written durably: one writer thread, group commit, a ticket per entry.

:class:`Journal` is the disk side of :class:`mockoss.upstream.record.Recorder`. Entries are queued
from any thread (:meth:`Journal.submit`) and rendered to text on the writer thread (so the event
loop never waits for rendering or the disk). The writer takes every entry queued so far, renders
them, appends them with one ``write`` call and ``fdatasync``s once (group commit: under load one
sync covers every entry that arrived meanwhile), then completes their tickets. A ticket done
means the entry is on disk: the file holds it after a ``kill -9`` of the process and, the data
being synced, after a power loss. The first write creates (truncates) the file and syncs its
directory entry.

Why one ``write`` per batch: the file is then only ever cut between batches, at an entry
boundary, by a process kill (Linux applies a regular-file ``write`` whole unless the process dies
inside that very call, for batches of many pages).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from pathlib import Path
from typing import Any

__all__ = ["Journal"]

logger = logging.getLogger("mockoss")


class Journal:
    """Entries appended durably to ``path`` (see the module docstring).

    Args:
        path: the file; created (emptied) by the first write, appended to after that.
        render: an entry's text, called on the writer thread; an exception, or text UTF-8 cannot
            encode, skips that entry only (logged).

    Attributes:
        written: entries written.
        write_seconds_total, write_seconds_max: seconds between an entry's submission and its sync.
    """

    def __init__(self, path: Path, render: Callable[[Any], str]) -> None:
        self.path, self._render = path, render
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queue: list[tuple[Any, Future[None], float]] = []
        self._open = 0  # entries begun and not yet on disk (or skipped)
        self._writing_since: float | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._fd: int | None = None
        self._created = False
        self.written = 0
        self.write_seconds_total = 0.0
        self.write_seconds_max = 0.0

    def begin(self) -> None:
        """Announce an entry that :meth:`submit` (or :meth:`skip`) will follow; :meth:`flush`
        waits for every announced entry."""
        with self._lock:
            self._open += 1

    def skip(self) -> None:
        """Withdraw an announced entry."""
        with self._lock:
            self._open -= 1
            self._changed.notify_all()

    def submit(self, entry: Any) -> Future[None]:
        """Queue an announced entry; the ticket is done once it is on disk (or failed to write:
        logged, never raised, so a response is not held forever)."""
        ticket: Future[None] = Future()
        with self._lock:
            self._queue.append((entry, ticket, time.monotonic()))
            if self._thread is None:
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name="mockoss-record", daemon=True)
                self._thread.start()
            self._changed.notify_all()
        return ticket

    def lag_seconds(self) -> float:
        """Age of the oldest entry submitted and not yet on disk (0 when none waits)."""
        with self._lock:
            oldest = self._queue[0][2] if self._queue else self._writing_since
        return 0.0 if oldest is None else max(0.0, time.monotonic() - oldest)

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every announced entry is on disk; ``False`` if ``timeout`` seconds passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._open <= 0 and not self._queue and self._writing_since is None, timeout)

    def close(self) -> None:
        """Write what is queued, stop the writer thread and close the file (idempotent; a later
        entry reopens it for appending)."""
        with self._lock:
            thread, self._stopping = self._thread, True
            self._changed.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._thread is thread:
                self._thread = None
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._queue and not self._stopping:
                    self._changed.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue, []
                self._writing_since = batch[0][2]
            try:
                self._write(batch)
            except Exception:  # whatever happens, the tickets complete: no response waits forever
                logger.exception("mockoss: could not write %d entries to %s", len(batch), self.path)
            now = time.monotonic()
            with self._changed:
                for _, ticket, queued in batch:
                    with contextlib.suppress(InvalidStateError):  # cancelled by its waiter: fine
                        ticket.set_result(None)
                    waited = now - queued
                    self.write_seconds_total += waited
                    self.write_seconds_max = max(self.write_seconds_max, waited)
                self.written += len(batch)
                self._open -= len(batch)
                self._writing_since = None
                self._changed.notify_all()

    def _write(self, batch: list[tuple[Any, Future[None], float]]) -> None:
        chunks = []
        for entry, _, _ in batch:
            try:  # one entry's failure (text UTF-8 cannot encode included) costs only that entry
                chunks.append(self._render(entry).encode("utf-8"))
            except Exception:
                logger.exception("mockoss: could not render an entry of %s", self.path)
        self._append(b"".join(chunks))

    def _append(self, data: bytes) -> None:
        if not data:
            return
        if self._fd is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            created, self._created = not self._created, True
            self._fd = os.open(self.path, flags | (os.O_TRUNC if created else 0), 0o644)
            if created:
                _sync_directory(self.path.parent)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        (getattr(os, "fdatasync", None) or os.fsync)(self._fd)


def _sync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
