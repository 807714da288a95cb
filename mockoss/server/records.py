"""The request log: what :class:`~mockoss.server.core.MockServer` received, for assertions."""

from __future__ import annotations

import json
import operator
from collections import deque
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, fields
from itertools import chain
from typing import Any, Self

from mockoss.slotnew import slot_builder

__all__ = ["DEFAULT_LOG_BYTES", "HINT", "REQUEST_RECORDS", "Endpoint", "RecordedRequest", "RequestLog", "header_items", "new_record"]

#: Set per HTTP request by the control plane (:mod:`mockoss.server.control`): every
#: :class:`RecordedRequest` the server logs for that request is appended here too, so the request
#: log of ``/mockoss/requests`` can join it (a list, so a worker thread's copied context shares it).
REQUEST_RECORDS: ContextVar[list[RecordedRequest] | None] = ContextVar("mockoss_request_records", default=None)

#: How a warning that explains the emulated server's answer starts (a refusal's known cause, a
#: message the server dropped: :mod:`mockoss.server.request_notes`), unlike a tool-check warning.
HINT = "hint: "

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
        warnings: tool-check problems of the scripted tool calls (:mod:`mockoss.scenario.tool_check`),
            and hints starting with :data:`HINT` on why the emulated server answered as it did (a
            refusal's known cause, a message it dropped: :mod:`mockoss.server.request_notes`).
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
        """Request headers, lower-cased names; a look-up ignores case (``headers.get("X-Custom")``:
        :class:`mockoss.scenario.conversation.RecordedHeaders`)."""
        from mockoss.scenario.conversation import RecordedHeaders

        return RecordedHeaders(self.header_items)

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


_FIELDS = len(fields(RecordedRequest))
_make_record = slot_builder(RecordedRequest)


def new_record(*values: Any) -> RecordedRequest:
    """``RecordedRequest(*values)``, every field given in order (``len(values)`` is the number of
    fields), built without the frozen dataclass's ``__init__``, which sets each slot through
    ``object.__setattr__`` (:func:`mockoss.slotnew.slot_builder`): the same object, 1.5 -> 0.9 us
    with a loop over the slots' setters, less with the builder's one call per slot (measured; a
    record is built for every request).

    Raises:
        ValueError: not one value per field.
    """
    if len(values) != _FIELDS:
        raise ValueError(f"RecordedRequest has {_FIELDS} fields, got {len(values)} values")
    return _make_record(*values)


#: Header pairs shared between log entries, by name then value (at most :data:`_SHARED_PAIRS`,
#: names up to :data:`_SHARED_NAME_CHARS` and values up to :data:`_SHARED_VALUE_CHARS`
#: characters: about 1.5 MB at most).
_PAIRS: dict[str, dict[str, tuple[str, str]]] = {}
_SHARED_PAIRS = 4096
_SHARED_NAME_CHARS = 64
_SHARED_VALUE_CHARS = 128
_shared = [0]
#: Whole header tuples shared between log entries (at most :data:`_SHARED_ITEMS` tuples of up to
#: :data:`_SHARED_ITEMS_PAIRS` shared pairs each: ~1.5 MB at most).
_ITEMS: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
_SHARED_ITEMS = 4096
_SHARED_ITEMS_PAIRS = 32


def header_items(headers: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``tuple(headers.items())`` whose ``(name, value)`` pairs are shared with earlier entries
    when the same pair came before, and the tuple itself when the same headers came before
    (immutable, so sharing is safe).

    A client sends the same host, content type, user agent and authorization every time: a
    logged request left one new pair per header, each walked by the garbage collector's next
    pass (issue 9: with ~14 new tracked objects a request, collections cost ~4 us a request over
    HTTP, ~0.3 us per object); a pair seen before is now the same object. New pairs are shared
    until :data:`_SHARED_PAIRS` are, so the table stays bounded whatever clients send. A tuple of
    shared pairs seen before is shared too (:data:`_ITEMS`): a new short chat turn left 4 tracked
    objects to the collector's next pass, the header tuple one of them; a client's requests
    differ in ``content-length`` at most, over a few values.
    """
    pairs = []
    append = pairs.append
    shared = True
    for name, value in headers.items():
        by_value = _PAIRS.get(name)
        pair = by_value.get(value) if by_value is not None else None
        if pair is None:
            pair = (name, value)
            if len(value) <= _SHARED_VALUE_CHARS and len(name) <= _SHARED_NAME_CHARS and _shared[0] < _SHARED_PAIRS:
                _PAIRS.setdefault(name, {})[value] = pair
                _shared[0] += 1
            else:
                shared = False
        append(pair)
    items = tuple(pairs)
    if shared and len(items) <= _SHARED_ITEMS_PAIRS:
        found = _ITEMS.get(items)
        if found is not None:
            return found
        if len(_ITEMS) < _SHARED_ITEMS:
            _ITEMS[items] = items
    return items


#: Bytes the request log keeps by default (bodies, headers, completions): 64 MiB.
DEFAULT_LOG_BYTES = 64 * 1024 * 1024
#: What one entry costs besides its variable-length fields (the object, its tuple, ints).
_ENTRY_OVERHEAD = 256


#: :func:`_headers_cost` of the header tuples shared in :data:`_ITEMS` (kept there for good, so
#: their ids stay theirs), by id: at most one entry per shared tuple.
_ITEMS_COST: dict[int, tuple[tuple[tuple[str, str], ...], int]] = {}


def _headers_cost(items: tuple[tuple[str, str], ...]) -> int:
    """Each pair's text, plus 64 for its tuple; a shared tuple's looked up (a client's requests
    share one, :func:`header_items`), not summed again for every entry."""
    found = _ITEMS_COST.get(id(items))
    if found is not None and found[0] is items:
        return found[1]
    cost = sum(map(len, chain.from_iterable(items))) + 64 * len(items)
    if type(items) is tuple and len(items) <= _SHARED_ITEMS_PAIRS:
        try:
            shared = _ITEMS.get(items) is items
        except TypeError:  # a record made by hand, with pairs that do not hash
            shared = False
        if shared:
            _ITEMS_COST[id(items)] = (items, cost)
    return cost


def _cost(record: RecordedRequest) -> int:
    """Approximate bytes ``record`` holds (its body, headers, completion, problem, warnings and
    server log text)."""
    cost = (
        _ENTRY_OVERHEAD + len(record.raw) + len(record.completion or "") + len(record.problem or "")
        + _headers_cost(record.header_items)
    )
    if record.warnings or record.server_log:  # mostly both empty: two sums cost ~0.2 us of every request
        cost += sum(map(len, record.warnings)) + sum(map(len, record.server_log))
    return cost


class RequestLog(deque):  # type: ignore[type-arg]
    """:attr:`MockServer.requests <mockoss.server.core.MockServer.requests>`: a deque of
    :class:`RecordedRequest` bounded in entries (``maxlen``) and in bytes (``max_bytes``).

    Every method that adds entries keeps both bounds, dropping entries from the end deque itself
    drops from at ``maxlen``: ``append``, ``extend``, ``+=``, ``*=``, ``insert`` and item
    assignment drop the oldest (leftmost) entries other than the one added, ``appendleft`` and
    ``extendleft`` the rightmost. The entry just added is never dropped, even alone above
    ``max_bytes``: that, and a ``max_bytes`` lowered by hand (nothing is dropped until the next
    entry comes), are the only ways :attr:`bytes` exceeds it. ``extend`` and ``extendleft`` add one
    entry after another, as deque does; ``*=`` keeps what appending the copies one by one would
    keep; ``insert`` into a log at ``maxlen`` raises :class:`IndexError`, as deque's does.

    :attr:`bytes` is the current total, by :func:`_cost`. Each entry's cost is kept beside it
    (``_costs``, in step through every method: removing, rotating and reversing move the costs
    with their entries), so dropping an entry does not compute it again (~0.5 us of every
    request once the log is full). Copies, ``+`` and ``*`` keep both bounds.
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

    def appendleft(self, record: RecordedRequest) -> None:
        """``append``'s mirror: at either bound the rightmost entries go, as deque's ``appendleft``
        drops at ``maxlen``."""
        maxlen = self.maxlen
        if maxlen == 0:
            return
        costs = self._costs
        if maxlen is not None and len(self) == maxlen:
            deque.pop(self)
            self.bytes -= costs.pop()
        deque.appendleft(self, record)
        cost = _cost(record)
        costs.appendleft(cost)
        self.bytes += cost
        if self.max_bytes is not None:
            while self.bytes > self.max_bytes and len(self) > 1:
                deque.pop(self)
                self.bytes -= costs.pop()

    def extend(self, records: Iterable[RecordedRequest]) -> None:
        for record in list(records) if records is self else records:
            self.append(record)

    def extendleft(self, records: Iterable[RecordedRequest]) -> None:
        for record in list(records) if records is self else records:
            self.appendleft(record)

    def __iadd__(self, records: Iterable[RecordedRequest]) -> Self:  # type: ignore[override, misc]
        self.extend(records)
        return self

    def insert(self, index: int, record: RecordedRequest) -> None:
        """deque's ``insert`` (:class:`IndexError` at ``maxlen``); over ``max_bytes`` the oldest
        other entries go."""
        size = len(self)
        deque.insert(self, index, record)  # raises first if the log is at maxlen
        at = operator.index(index)
        at = min(max(at + size if at < 0 else at, 0), size)  # where list.insert and deque.insert put it
        cost = _cost(record)
        self._costs.insert(at, cost)
        self.bytes += cost
        self._keep_bytes(at)

    def __setitem__(self, index: int, record: RecordedRequest) -> None:  # type: ignore[override]
        """deque's item assignment; over ``max_bytes`` the oldest other entries go."""
        deque.__setitem__(self, index, record)  # raises first if index is out of range
        at = operator.index(index)
        at = at + len(self) if at < 0 else at
        cost = _cost(record)
        self.bytes += cost - self._costs[at]
        self._costs[at] = cost
        self._keep_bytes(at)

    def _keep_bytes(self, kept: int) -> None:
        """Drop the oldest entries but the one at ``kept`` while the log is over ``max_bytes``."""
        if self.max_bytes is None:
            return
        costs = self._costs
        while self.bytes > self.max_bytes and len(self) > 1:
            if kept > 0:
                deque.popleft(self)
                self.bytes -= costs.popleft()
                kept -= 1
            else:
                deque.__delitem__(self, 1)
                self.bytes -= costs[1]
                del costs[1]

    def __imul__(self, times: int) -> Self:  # type: ignore[override, misc]
        """``times`` copies of the entries, as many as appending them one by one keeps: the
        longest run at the right end within both bounds, never fewer than one entry (built from
        the right, so a large ``times`` costs no more than the run kept)."""
        times = operator.index(times)
        if times <= 0 or not self:
            self.clear()
            return self
        entries, costs = list(self), list(self._costs)
        total = len(entries) * times
        maxlen, max_bytes = self.maxlen, self.max_bytes
        kept: list[RecordedRequest] = []
        kept_costs: list[int] = []
        size = 0
        width = len(entries)
        while len(kept) < total and (maxlen is None or len(kept) < maxlen):
            position = width - 1 - len(kept) % width
            cost = costs[position]
            if kept and max_bytes is not None and size + cost > max_bytes:
                break
            kept.append(entries[position])
            kept_costs.append(cost)
            size += cost
        deque.clear(self)
        deque.extend(self, reversed(kept))
        self._costs = deque(reversed(kept_costs))
        self.bytes = size
        return self

    def popleft(self) -> RecordedRequest:
        record = deque.popleft(self)
        self.bytes -= self._costs.popleft()
        return record  # type: ignore[no-any-return]

    def pop(self) -> RecordedRequest:  # type: ignore[override]
        record = deque.pop(self)
        self.bytes -= self._costs.pop()
        return record  # type: ignore[no-any-return]

    def __delitem__(self, index: int) -> None:  # type: ignore[override]
        cost = self._costs[index]  # raises first if index is out of range
        deque.__delitem__(self, index)
        del self._costs[index]
        self.bytes -= cost

    def remove(self, record: RecordedRequest) -> None:
        try:
            index = deque.index(self, record)
        except ValueError:
            raise ValueError("deque.remove(x): x not in deque") from None
        del self[index]

    def rotate(self, steps: int = 1) -> None:
        deque.rotate(self, steps)
        self._costs.rotate(steps)

    def reverse(self) -> None:
        deque.reverse(self)
        self._costs.reverse()

    def clear(self) -> None:
        deque.clear(self)
        self._costs.clear()
        self.bytes = 0

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
        """What ``*=`` keeps, on a copy: built from the right within the bounds, never all
        ``times`` copies first (``log * sys.maxsize`` of a bounded log was a MemoryError)."""
        repeated = self.copy()
        repeated *= times
        return repeated

    __rmul__ = __mul__
