"""The request log: what :class:`~mockoss.server.core.MockServer` received, for assertions."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, fields
from itertools import chain, repeat
from operator import call
from typing import Any

__all__ = ["DEFAULT_LOG_BYTES", "REQUEST_RECORDS", "Endpoint", "RecordedRequest", "RequestLog", "header_items", "new_record"]

#: Set per HTTP request by the control plane (:mod:`mockoss.server.control`): every
#: :class:`RecordedRequest` the server logs for that request is appended here too, so the request
#: log of ``/mockoss/requests`` can join it (a list, so a worker thread's copied context shares it).
REQUEST_RECORDS: ContextVar[list[RecordedRequest] | None] = ContextVar("mockoss_request_records", default=None)

#: An endpoint name from :data:`mockoss.endpoints.ENDPOINTS`, e.g. ``"chat"``.
Endpoint = str


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received, for assertions.

    Kept as received (raw bytes, header pairs) and parsed on access, so a long-running server's
    log costs little memory and no garbage-collector time.

    Attributes:
        index: 0-based position since the last reset.
        endpoint: the endpoint name, e.g. ``"chat"`` or ``"responses"``.
        raw: the request body as received.
        header_items: request headers as ``(lower-cased name, value)`` pairs.
        scenario: name of the scenario that answered, else ``None``.
        step: index of the scripted step that answered (in its rule), else ``None``.
        status: HTTP status of the reply.
        completion: the raw Harmony completion text behind the reply (templates rendered), else ``None``.
        rule: the rule that answered: its ``name``, else ``#N`` (1-based); ``None`` if none did.
        turn: the request's turn number (see :mod:`mockoss.scenario.conversation`), else ``None``.
        problem: why no step answered (no rule matches: each rule's reasons; a template failed), else ``None``.
        warnings: tool-check problems of the scripted tool calls (:mod:`mockoss.scenario.tool_check`).
        exhausted: the rule was used up and answered its ``exhausted_error`` (``when_exhausted: error``).
        server_log: lines the emulated server logs for this request (``Reply.log``: LM Studio's
            ``Failed to parse tool call: …`` when it drops a call, lmstudio-bug-tracker#876; mockoss
            notes on an option it does not emulate).
    """

    index: int
    endpoint: Endpoint
    raw: bytes
    header_items: tuple[tuple[str, str], ...]
    scenario: str | None
    step: int | None
    status: int
    completion: str | None
    rule: str | None = None
    turn: int | None = None
    problem: str | None = None
    warnings: tuple[str, ...] = ()
    exhausted: bool = False
    server_log: tuple[str, ...] = ()

    @property
    def body(self) -> Any:
        """The parsed JSON body, or ``None`` if it was not JSON."""
        try:
            return json.loads(self.raw)
        except (ValueError, RecursionError):
            return None

    @property
    def headers(self) -> dict[str, str]:
        """Request headers, lower-cased names."""
        return dict(self.header_items)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Chat ``messages`` of the request (empty for other endpoints)."""
        body = self.body
        return list(body.get("messages", [])) if isinstance(body, dict) else []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Declared ``tools`` of the request."""
        body = self.body
        return list(body.get("tools") or []) if isinstance(body, dict) else []


_SLOT_SETTERS = tuple(RecordedRequest.__dict__[f.name].__set__ for f in fields(RecordedRequest))
_drain = deque(maxlen=0).extend


def new_record(*values: Any) -> RecordedRequest:
    """``RecordedRequest(*values)``, every field given in order (``len(values)`` is the number of
    fields), built without the frozen dataclass's ``__init__``, which sets each slot through
    ``object.__setattr__`` (the class has no ``__post_init__``): the same object, 1.5 -> 0.9 us
    (measured; a record is built for every request).

    Raises:
        ValueError: not one value per field.
    """
    if len(values) != len(_SLOT_SETTERS):
        raise ValueError(f"RecordedRequest has {len(_SLOT_SETTERS)} fields, got {len(values)} values")
    record = object.__new__(RecordedRequest)
    _drain(map(call, _SLOT_SETTERS, repeat(record), values))
    return record


#: Header pairs shared between log entries, by name then value (at most :data:`_SHARED_PAIRS`,
#: names up to :data:`_SHARED_NAME_CHARS` and values up to :data:`_SHARED_VALUE_CHARS`
#: characters: about 1.5 MB at most).
_PAIRS: dict[str, dict[str, tuple[str, str]]] = {}
_SHARED_PAIRS = 4096
_SHARED_NAME_CHARS = 64
_SHARED_VALUE_CHARS = 128
_shared = [0]


def header_items(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``tuple(headers.items())`` whose ``(name, value)`` pairs are shared with earlier entries
    when the same pair came before (immutable, so sharing is safe).

    A client sends the same host, content type, user agent and authorization every time: a
    logged request left one new pair per header, each walked by the garbage collector's next
    pass (issue 9: with ~14 new tracked objects a request, collections cost ~4 us a request over
    HTTP, ~0.3 us per object); a pair seen before is now the same object. New pairs are shared
    until :data:`_SHARED_PAIRS` are, so the table stays bounded whatever clients send.
    """
    pairs = []
    append = pairs.append
    for name, value in headers.items():
        by_value = _PAIRS.get(name)
        pair = by_value.get(value) if by_value is not None else None
        if pair is None:
            pair = (name, value)
            if len(value) <= _SHARED_VALUE_CHARS and len(name) <= _SHARED_NAME_CHARS and _shared[0] < _SHARED_PAIRS:
                _PAIRS.setdefault(name, {})[value] = pair
                _shared[0] += 1
        append(pair)
    return tuple(pairs)


#: Bytes the request log keeps by default (bodies, headers, completions): 64 MiB.
DEFAULT_LOG_BYTES = 64 * 1024 * 1024
#: What one entry costs besides its variable-length fields (the object, its tuple, ints).
_ENTRY_OVERHEAD = 256


def _cost(record: RecordedRequest) -> int:
    """Approximate bytes ``record`` holds (its body, headers, completion, problem, warnings and
    server log text)."""
    items = record.header_items
    return (
        _ENTRY_OVERHEAD + len(record.raw) + len(record.completion or "") + len(record.problem or "")
        + sum(map(len, chain.from_iterable(items))) + 64 * len(items)  # each pair's text, plus 64 for its tuple
        + sum(map(len, record.warnings)) + sum(map(len, record.server_log))
    )


class RequestLog(deque):  # type: ignore[type-arg]
    """:attr:`MockServer.requests <mockoss.server.core.MockServer.requests>`: a deque of
    :class:`RecordedRequest` bounded in entries (``maxlen``) and in bytes (``max_bytes``).

    Appending past either bound drops the oldest entries; the newest entry is always kept, even
    alone above ``max_bytes``. :attr:`bytes` is the current total, by :func:`_cost`. Each entry's
    cost is kept beside it, so dropping an entry does not compute it again (~0.5 us of every
    request once the log is full); the other deque methods that change it in place recount every
    entry (nothing in mockoss calls them; they do not apply ``max_bytes``, only ``append`` does),
    and copies, ``+`` and ``*`` keep both bounds.
    """

    def __init__(self, entries: Iterable[RecordedRequest] = (), maxlen: int | None = None, max_bytes: int | None = DEFAULT_LOG_BYTES) -> None:
        super().__init__((), maxlen)
        self.max_bytes = max_bytes
        self.bytes = 0
        self._costs: deque[int] = deque()
        for entry in entries:
            self.append(entry)

    def append(self, record: RecordedRequest) -> None:
        maxlen = self.maxlen
        if maxlen == 0:
            return  # keeps nothing
        costs = self._costs
        if maxlen is not None and len(self) == maxlen:
            deque.popleft(self)
            self.bytes -= costs.popleft()
        deque.append(self, record)
        cost = _cost(record)
        costs.append(cost)
        self.bytes += cost
        if self.max_bytes is not None:
            while self.bytes > self.max_bytes and len(self) > 1:
                deque.popleft(self)
                self.bytes -= costs.popleft()

    def popleft(self) -> RecordedRequest:
        record = deque.popleft(self)
        self.bytes -= self._costs.popleft()
        return record  # type: ignore[no-any-return]

    def pop(self) -> RecordedRequest:  # type: ignore[override]
        record = deque.pop(self)
        self.bytes -= self._costs.pop()
        return record  # type: ignore[no-any-return]

    def clear(self) -> None:
        deque.clear(self)
        self._costs.clear()
        self.bytes = 0

    def _recount(self) -> None:
        self._costs = deque(map(_cost, self))
        self.bytes = sum(self._costs)

    def copy(self) -> RequestLog:
        """A new log of the same entries and bounds (``copy.copy``, ``copy.deepcopy`` and pickle
        keep the bounds too, through :meth:`__reduce__`)."""
        return type(self)(self, self.maxlen, self.max_bytes)

    __copy__ = copy

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (list(self), self.maxlen, self.max_bytes)

    def __add__(self, other: Iterable[RecordedRequest]) -> RequestLog:  # type: ignore[override]
        joined = self.copy()
        joined.extend(other)
        return joined

    def __mul__(self, times: int) -> RequestLog:  # type: ignore[override]
        return type(self)(list(self) * times, self.maxlen, self.max_bytes)

    __rmul__ = __mul__


def _recounting(name: str) -> Any:
    method = getattr(deque, name)

    def recounted(self: RequestLog, *args: Any) -> Any:
        result = method(self, *args)
        self._recount()
        return self if result is self else result

    recounted.__name__ = recounted.__qualname__ = name
    return recounted


for _name in ("appendleft", "extend", "extendleft", "insert", "remove", "rotate", "reverse", "__delitem__", "__setitem__", "__iadd__", "__imul__"):
    setattr(RequestLog, _name, _recounting(_name))
