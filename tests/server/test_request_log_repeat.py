"""``RequestLog * n`` keeps what ``*= n`` keeps without building all ``n`` copies first, as
deque's ``*`` does for a bounded deque (CPython's deque_inplace_repeat caps the copies at
``maxlen``): ``log * sys.maxsize`` of a log bounded in entries or bytes is a MemoryError
otherwise (``list(self) * times``)."""

from __future__ import annotations

import sys
from collections import deque

import pytest

from mockoss.server.records import RecordedRequest, RequestLog, _cost


def _record(n: int, size: int = 100) -> RecordedRequest:
    return RecordedRequest(n, "chat", b"x" * size, (("host", "h"),), None, None, 200, None)


@pytest.mark.parametrize("bounds", [(3, None), (None, 5), (4, 2), (None, None)])
@pytest.mark.parametrize("times", [-1, 0, 1, 2, 7, sys.maxsize])
def test_times_keeps_what_times_in_place_keeps(bounds, times):
    maxlen, units = bounds
    if maxlen is None and units is None and times == sys.maxsize:
        pytest.skip("unbounded: as deque, every copy is kept")
    entries = [_record(n) for n in range(3)]
    log = RequestLog(entries, maxlen, None if units is None else units * _cost(entries[0]))
    before = list(log)
    in_place = log.copy()
    in_place *= times
    for repeated in (log * times, times * log):
        assert type(repeated) is RequestLog
        assert list(repeated) == list(in_place)
        assert (repeated.maxlen, repeated.max_bytes, repeated.bytes) == (in_place.maxlen, in_place.max_bytes, in_place.bytes)
        assert list(repeated._costs) == [_cost(r) for r in repeated]
    assert list(log) == before  # unchanged
    if units is None and times != sys.maxsize:
        assert list(log * times) == list(deque(before, maxlen) * times)
