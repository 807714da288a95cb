"""The control plane's request log (:mod:`mockoss.server.control`): its entries, their bounds in
bytes, and their JSON for ``GET /mockoss/requests`` (:mod:`mockoss.server.control_routes`).

An entry is a tuple of scalars (:data:`LogEntry`); a session's log keeps at most
:data:`SESSION_CONTROL_LOG_BYTES` of them, all sessions together :data:`CONTROL_LOG_BYTES`
(:func:`drop_oldest`), each with its path cut to :data:`LOG_PATH_CHARS` (:func:`cut_path`). The
JSON of a long log is built a part at a time on a worker thread (:class:`LogWriter`) and sent as
it is built (:func:`streamed`), readers taking turns.

The worker threads are daemon threads of a :class:`mockoss.workers.DaemonPool` (the control app's
own, of :data:`LOG_WRITES` threads: :func:`mockoss.server.control_routes.control_app`), not
``anyio.to_thread``'s: a stopping ``mockoss serve`` does not wait for a log nobody will read
(``tests/server/test_stop_control_routes.py``).
"""

from __future__ import annotations

import heapq
import json
import math
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mockoss.profiles.wire import rebuild
from mockoss.workers import DaemonPool, run_off_loop

if TYPE_CHECKING:
    from mockoss.server.records import RecordedRequest

__all__ = [
    "CONTROL_LOG_BYTES",
    "LOG_BUFFER_BYTES",
    "LOG_PATH_CHARS",
    "LOG_SLICE_BYTES",
    "LOG_WRITES",
    "SESSION_CONTROL_LOG_BYTES",
    "LogEntry",
    "LogWriter",
    "cut_path",
    "drop_oldest",
    "entry_bytes",
    "joined",
    "log_entry",
    "log_parts",
    "streamed",
]

#: Characters of a request's path a log entry keeps; a longer path is kept as its first
#: :data:`LOG_PATH_CHARS` characters and :func:`cut_path`'s mark. An API path is tens of
#: characters (the query string is not part of it); ~64 KB paths were accepted and logged whole,
#: 10,000 per session (issue 9 review, eighth session, finding 3). No source settles the figure:
#: ours, a browser-era URL length that keeps any real route whole.
LOG_PATH_CHARS = 2048
#: Bytes of entries (as :func:`entry_bytes` counts them) one session's control-plane log keeps,
#: the default session's included; the oldest go first. An ordinary entry is ~0.4 KB: 10,000 of
#: them fit, 2 KB-path probes ~3,500. Ours (no source settles it).
SESSION_CONTROL_LOG_BYTES = 8 * 1024 * 1024
#: Bytes of entries all sessions' control-plane logs keep together (as the server's own request
#: log, ``MockServer.request_log_bytes``); beyond it the oldest entries of any session go first.
#: Checked every :data:`CONTROL_LOG_CHECK_BYTES` of new entries, so the logs may pass it by that much.
CONTROL_LOG_BYTES = 64 * 1024 * 1024
#: Bytes of new entries between two checks of :data:`CONTROL_LOG_BYTES` (a check sums the
#: sessions' counts: ~257 additions; its evictions run ~1 us an entry, ~2.5 ms at most).
CONTROL_LOG_CHECK_BYTES = 1024 * 1024

#: A session's request-log entry as :meth:`mockoss.server.control.ControlPlane.log` keeps it: ``(seq, method, path,
#: status, endpoint, test_id, session, seconds, index, scenario, rule, turn, step, bytes)``, the
#: five before ``bytes`` the generation record's (``None`` without one), ``bytes`` what
#: :func:`entry_bytes` counts it for. A tuple of scalars: cheaper to build on every request than
#: the dict :func:`log_entry` spells out when ``/mockoss/requests`` reads it, and not tracked by
#: the garbage collector once it has seen it.
LogEntry = tuple[Any, ...]
_LOG_FIELDS = ("seq", "method", "path", "status", "endpoint", "test_id", "session", "ms", "index", "scenario", "rule", "turn", "step")
#: What an entry holds besides its strings: the 14-item tuple, the seconds' float, the sequence
#: number, record index and byte count (CPython 3.11, 64-bit; the scenario and rule names are the
#: scenario's own strings, held there).
_ENTRY_OVERHEAD = sys.getsizeof(tuple(range(14))) + sys.getsizeof(0.5) + 3 * sys.getsizeof(1 << 40)
_getsizeof = sys.getsizeof


def cut_path(path: str) -> str:
    """``path`` as a log entry keeps it: itself up to :data:`LOG_PATH_CHARS` characters, else
    its first :data:`LOG_PATH_CHARS` and ``...[mockoss: N more characters not logged]`` (ASCII: a
    non-Latin-1 mark would double the size of an ASCII path's copy)."""
    if len(path) <= LOG_PATH_CHARS:
        return path
    return f"{path[:LOG_PATH_CHARS]}...[mockoss: {len(path) - LOG_PATH_CHARS:,} more characters not logged]"


def entry_bytes(method: Any, path: str, test_id: str | None, session: str | None) -> int:
    """Bytes a log entry with these strings holds (``sys.getsizeof`` of each, the tuple's own)."""
    size = _ENTRY_OVERHEAD + _getsizeof(path) + _getsizeof(method)
    if test_id is not None:
        size += _getsizeof(test_id)
    if session is not None:
        size += _getsizeof(session)
    return size


def log_entry(entry: LogEntry) -> dict[str, Any]:
    """The ``/mockoss/requests`` fields of a session's log entry (``ms``: its seconds in ms, 3 decimals)."""
    out = dict(zip(_LOG_FIELDS, entry))
    out["ms"] = round(entry[7] * 1000, 3)
    return out


def drop_oldest(sessions: list[Any], budget: int) -> None:
    """Drop the oldest entries of the ``sessions``' logs together (by sequence number, each log
    oldest first) until they hold at most ``budget`` bytes. A session has ``log`` (a deque of
    entries, each with its byte count last) and ``bytes`` (their sum), both updated here."""
    total = sum(s.bytes for s in sessions)
    if total <= budget:
        return
    heads = [(s.log[0][0], i) for i, s in enumerate(sessions) if s.log]
    heapq.heapify(heads)
    while total > budget and heads:
        _, i = heapq.heappop(heads)
        found = sessions[i]
        size = found.log.popleft()[-1]
        found.bytes -= size
        total -= size
        if found.log:
            heapq.heappush(heads, (found.log[0][0], i))


def _finite(data: Any) -> Any:
    """``data`` with each float that JSON cannot hold (``NaN``, ``±Infinity``, which a client may
    send and Python's ``json.loads`` accepts) replaced by its JavaScript spelling as a string.
    A copy by :func:`mockoss.profiles.wire.rebuild` (a loop over a stack, not recursion: a body
    nested as deep as ``json.loads`` takes (600 levels) made a recursive version a 500)."""
    return rebuild(data, _js_spelling)


def _js_spelling(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    return value


#: Bytes of the log's JSON :func:`joined` sends at most in one piece (a 10 MB entry in one copy
#: and one write held the loop ~10 ms), and that :func:`streamed` builds at a time.
LOG_SLICE_BYTES = 1024 * 1024
#: Bytes of a log's JSON built before its first byte is sent: a log within it is sent whole, with
#: its ``content-length``; a longer one is built and sent :data:`LOG_SLICE_BYTES` at a time
#: (chunked), so a reader holds about this much of it, not the whole log (issue 9 review, eighth
#: session, finding 6: 16 readers of a 67 MB log each built it whole, 1.36 GB).
LOG_BUFFER_BYTES = 4 * 1024 * 1024
#: Log parts built at once, all readers together (each a worker thread): readers beyond it wait
#: their turn a part at a time, so many readers neither hold a copy of the log each nor keep
#: threads contending for the interpreter with the event loop (16 at once: another client's
#: median wait 50 ms). One: a part is ~1 MiB, ~10 ms; turns interleave readers fairly (the
#: pool's queue, :class:`mockoss.workers.DaemonPool`, serves calls first come, first served, as
#: anyio's limiter did), and a stalled reader, which holds no turn while its bytes wait to be
#: sent, delays no one.
LOG_WRITES = 1


#: the pool :func:`_log_json` uses when given none: one for the process, so calls without a pool
#: share :data:`LOG_WRITES` threads (a new pool per call left one more idle thread each, for 10 s:
#: review 12, finding 4). Its threads start on first use.
DEFAULT_LOG_POOL = DaemonPool(LOG_WRITES, "mockoss-log")


async def _log_json(
    entries: list[Any], records: dict[int, RecordedRequest], pool: DaemonPool | None = None
) -> list[bytes]:
    """:func:`log_parts` on a daemon thread of ``pool`` (see there why; :data:`DEFAULT_LOG_POOL`
    when none is given)."""
    return await run_off_loop(pool if pool is not None else DEFAULT_LOG_POOL, log_parts, entries, records)


def log_parts(entries: list[Any], records: dict[int, RecordedRequest]) -> list[bytes]:
    """The items of the ``/mockoss/requests`` body, each entry of ``entries`` (:func:`log_entry`
    fields with :func:`_entry_json`'s) as JSON in UTF-8; ``[`` the items joined by ``,`` ``]``
    (:func:`joined`) are the bytes Starlette's ``JSONResponse`` wrote for the whole list
    (``ensure_ascii=False``, ``allow_nan=False``, separators ``,`` and ``:``): that is what the
    encoder writes for a list under these separators (``tests/server/test_isolation_leftovers.py``
    compares).

    Built on a worker thread (:func:`_log_json`), an entry at a time, and sent a part at a time,
    never joined (a 64 MiB ``bytes`` join and one 64 MiB write held the loop ~0.1 s more), so that
    reading a full log does not hold up other clients: the event loop takes the interpreter back
    between any two steps (``mockoss serve`` switches threads every 1 ms), where built on the
    loop with a yield every 1 MiB of JSON, another client's request waited
    for one slice or step at each of its own turns (a log holding a 10 MB body: 113 ms in one go,
    75-81 ms with a yield between the body's parse, its JSON and its bytes;
    ``benchmarks/bench_isolation.py``, cases ``10MB,log``). One step is still one call holding
    the interpreter: a 10 MB body's parse or JSON, ~20-40 ms.

    If any body holds NaN or Infinity (Python's json reads them, JSON has no such numbers) or a
    lone UTF-16 surrogate (``"\\ud800"``, which UTF-8 cannot encode), the whole list is written
    again with NaN and Infinity spelt as strings and every non-ASCII character as a JSON escape,
    so nothing is lost.
    """
    return LogWriter(entries, dict(records)).take(sys.maxsize)


class LogWriter:
    """The ``/mockoss/requests`` items of a log snapshot (``entries``, ``records`` as
    :func:`log_parts` takes them), built a part at a time by :meth:`take` on a worker thread.

    The first :meth:`take` writes as :func:`log_parts` does, the whole list again in ASCII when
    an item needs it; so a log the first take holds whole is the bytes ``JSONResponse`` wrote. A
    later take (the log is being streamed, its start already sent) writes such an item alone in
    ASCII: the same JSON values, other bytes. Each record is let go (popped from ``records``,
    which the writer owns) once written.
    """

    def __init__(self, entries: list[Any], records: dict[int, RecordedRequest]) -> None:
        self.entries, self.records = entries, records
        self.next = 0
        self.ascii = False

    @property
    def done(self) -> bool:
        """Every entry written."""
        return self.next >= len(self.entries)

    def take(self, budget: int) -> list[bytes]:
        """The next items, as UTF-8 JSON, until they hold ``budget`` bytes (at least one item;
        none when :attr:`done`)."""
        first = self.next == 0
        start, parts, size = self.next, [], 0
        while self.next < len(self.entries) and size < budget:
            entry = self.entries[self.next]
            item = _entry_json(log_entry(entry), self.records)
            try:
                part = _item_json(item, self.ascii)
            except ValueError:
                if first and not self.ascii:  # not sent yet: the whole list in ASCII, as log_parts
                    self.ascii, self.next, parts, size = True, start, [], 0
                    continue
                part = _item_json(item, True)
            parts.append(part)
            size += len(part)
            self.next += 1
        for entry in self.entries[start : self.next]:
            self.records.pop(entry[8], None)  # 8: the record's index (None: no record)
        return parts


def _item_json(item: dict[str, Any], ascii_only: bool) -> bytes:
    """One ``/mockoss/requests`` item as :func:`log_parts` writes it, in UTF-8 (``ValueError``:
    NaN, Infinity, or a lone surrogate that UTF-8 cannot encode, when not ``ascii_only``)."""
    if ascii_only:
        return json.dumps(_finite(item), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    return json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


async def streamed(writer: LogWriter, first: list[bytes], pool: DaemonPool) -> AsyncIterator[bytes]:
    """``[``, the items of ``first`` and of the writer's further :meth:`LogWriter.take` of
    :data:`LOG_SLICE_BYTES` each (on a daemon thread of ``pool``, in turn with the other readers'
    takes), ``,`` between, ``]``."""
    parts, lead = first, b"["
    while parts:
        async for chunk in _pieces(parts, lead):
            yield chunk
        lead = b","
        if writer.done:
            break
        parts = await run_off_loop(pool, writer.take, LOG_SLICE_BYTES)
    yield b"]"


async def _pieces(parts: list[bytes], lead: bytes) -> AsyncIterator[bytes]:
    """``lead`` and ``parts`` joined by ``,``, a part at a time, one over :data:`LOG_SLICE_BYTES`
    in slices of that size."""
    for i, part in enumerate(parts):
        head = lead if i == 0 else b","
        if len(part) <= LOG_SLICE_BYTES:
            yield head + part
            continue
        yield head
        view = memoryview(part)
        for start in range(0, len(part), LOG_SLICE_BYTES):
            yield bytes(view[start : start + LOG_SLICE_BYTES])


async def joined(parts: list[bytes]) -> AsyncIterator[bytes]:
    """``b"[" + b",".join(parts) + b"]"``, a part at a time, a part over :data:`LOG_SLICE_BYTES`
    in slices of that size."""
    if not parts:
        yield b"[]"
        return
    async for chunk in _pieces(parts, b"["):
        yield chunk
    yield b"]"


def _entry_json(entry: dict[str, Any], records: dict[int, RecordedRequest]) -> dict[str, Any]:
    """A log entry with its request body, completion and server log lines from the server's log
    (``None`` and ``[]`` once that log has dropped them, and then ``"body_dropped": true`` after
    ``body``: a test-id session keeps :data:`mockoss.server.control.SESSION_LOG_BYTES` of bodies,
    fewer than its entries, and a dropped body was a bare ``null``, indistinguishable from an
    entry without a generation record; issue 9, eleventh-session breaker, finding 4). An entry
    without a record (``index`` ``None``: a control route, a refused request) has no such key,
    and neither has an entry whose record is kept: their bytes are unchanged."""
    index = entry["index"]
    record = records.get(index) if index is not None else None
    if record is None and index is not None:
        return {**entry, "body": None, "body_dropped": True, "completion": None, "server_log": [], "warnings": []}
    return {
        **entry,
        "body": record.body if record is not None else None,
        "completion": record.completion if record is not None else None,
        "server_log": list(record.server_log) if record is not None else [],
        # Tool-check warnings (README: Tool checks): the only view of them a `mockoss serve` user has.
        "warnings": list(record.warnings) if record is not None else [],
    }
