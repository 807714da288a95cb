"""Every ``RequestLog`` method that adds entries keeps both of its bounds (issue 9: memory bounded in
bytes): ``max_bytes`` as ``append`` keeps it, not only ``append``. The end that drops is the one
deque itself drops from at ``maxlen`` (``appendleft``/``extendleft``: the right); the entry just
added always stays; the kept costs stay in step with the entries."""

from __future__ import annotations

import random
from collections import deque

import pytest

from mockoss.server.records import RecordedRequest, RequestLog, _cost


def _record(n: int, size: int = 100) -> RecordedRequest:
    return RecordedRequest(n, "chat", b"x" * size, (("host", "h"),), None, None, 200, None)


def _in_step(log: RequestLog) -> None:
    """``bytes`` is the sum of the entries' costs, each kept beside its entry."""
    assert list(log._costs) == [_cost(r) for r in log]
    assert log.bytes == sum(map(_cost, log))


def _bounded(log: RequestLog) -> None:
    _in_step(log)
    assert len(log) <= (log.maxlen if log.maxlen is not None else len(log))
    assert log.max_bytes is None or log.bytes <= log.max_bytes or len(log) == 1  # the documented single-entry case


UNIT = _cost(_record(0))  # one 100-byte entry


def _sized(n: int, units: int) -> RecordedRequest:
    """An entry that costs ``units`` times a 100-byte one."""
    return _record(n, 100 + (units - 1) * UNIT)


def _full(maxlen: int | None = None) -> RequestLog:
    log = RequestLog(maxlen=maxlen, max_bytes=4 * UNIT)
    for n in range(4):
        log.append(_record(n))
    assert log.bytes == 4 * UNIT
    return log


def _indexes(log: RequestLog) -> list[int]:
    return [r.index for r in log]


def test_extend_and_iadd_drop_the_oldest_entries_past_max_bytes():
    log = _full()
    log.extend([_record(10), _record(11)])
    _bounded(log)
    assert _indexes(log) == [2, 3, 10, 11]
    log += [_record(12)]
    _bounded(log)
    assert _indexes(log) == [3, 10, 11, 12]
    log.extend(log)  # itself: its entries as they were
    _bounded(log)
    assert _indexes(log) == [3, 10, 11, 12]


def test_appendleft_and_extendleft_drop_from_the_right_past_max_bytes():
    log = _full()
    log.appendleft(_record(10))
    _bounded(log)
    assert _indexes(log) == [10, 0, 1, 2]
    log.extendleft([_record(11), _record(12)])  # deque.extendleft: each goes to the left in turn
    _bounded(log)
    assert _indexes(log) == [12, 11, 10, 0]


def test_the_left_methods_drop_from_the_right_at_maxlen_as_deque_does():
    log, plain = _full(maxlen=4), deque(range(4), maxlen=4)
    log.appendleft(_record(10))
    plain.appendleft(10)
    log.extendleft([_record(11), _record(12)])
    plain.extendleft([11, 12])
    _bounded(log)
    assert _indexes(log) == list(plain) == [12, 11, 10, 0]


def test_insert_and_item_assignment_drop_the_oldest_other_entries():
    log = _full()
    log.insert(2, _sized(10, 3))  # three more units: the three oldest go
    _bounded(log)
    assert _indexes(log) == [10, 3]
    log.insert(0, _sized(11, 2))  # at the left end: the oldest other entries, to its right, go
    _bounded(log)
    assert _indexes(log) == [11, 3]
    log = _full()
    log[-1] = _sized(12, 3)  # the newest entry, grown by two units: the two oldest go
    _bounded(log)
    assert _indexes(log) == [2, 12]
    log[0] = _sized(13, 2)  # the oldest, grown: the entries after it go, oldest first
    _bounded(log)
    assert _indexes(log) == [13]
    log = _full()
    log[1] = _sized(14, 3)
    _bounded(log)
    assert _indexes(log) == [14, 3]


def test_insert_into_a_log_at_maxlen_raises_as_deque_does():
    log = _full(maxlen=4)
    with pytest.raises(IndexError):
        deque(range(4), maxlen=4).insert(1, 9)
    with pytest.raises(IndexError):
        log.insert(1, _record(9))
    _bounded(log)
    assert _indexes(log) == [0, 1, 2, 3]


def test_a_new_entry_alone_over_max_bytes_is_kept_by_every_method():
    big = _record(99, 10_000)
    for add in (
        lambda log: log.append(big),
        lambda log: log.appendleft(big),
        lambda log: log.extend([big]),
        lambda log: log.extendleft([big]),
        lambda log: log.insert(2, big),
        lambda log: log.__setitem__(1, big),
        lambda log: log.__iadd__([big]),
    ):
        log = _full()
        add(log)
        _in_step(log)
        assert _indexes(log) == [99]


@pytest.mark.parametrize("maxlen", [None, 6])
def test_imul_keeps_what_appending_the_copies_one_by_one_keeps(maxlen):
    sizes = [100, 900, 50, 400]
    for times in (0, 1, 2, 3, 10**9):
        log = RequestLog(maxlen=maxlen, max_bytes=6 * UNIT)
        for n, size in enumerate(sizes):
            log.append(_record(n, size))
        expected = RequestLog(maxlen=maxlen, max_bytes=6 * UNIT)
        for _ in range(min(times, 4)):  # a round costs over max_bytes: past two, appending changes nothing more
            for record in list(log):
                expected.append(record)
        log *= times
        _bounded(log)
        assert _indexes(log) == _indexes(expected), times


def test_add_and_mul_give_logs_within_both_bounds():
    log = _full()
    for made in (log + [_record(10), _record(11)], log * 3, 3 * log, log + log):
        assert isinstance(made, RequestLog) and made.max_bytes == log.max_bytes
        _bounded(made)
    assert _indexes(log + [_record(10), _record(11)]) == [2, 3, 10, 11]


def test_removing_and_reordering_keep_each_cost_beside_its_entry():
    log = RequestLog(max_bytes=None)
    for n in range(6):
        log.append(_record(n, 100 * n))
    log.rotate(2)
    _in_step(log)
    log.reverse()
    _in_step(log)
    log.remove(_record(3, 300))
    _in_step(log)
    del log[1]
    del log[-1]
    _in_step(log)
    with pytest.raises(ValueError, match="not in deque"):
        log.remove(_record(77))
    with pytest.raises(IndexError):
        del log[10]
    with pytest.raises(IndexError):
        log[10] = _record(9)
    _in_step(log)


# -- a model of the rules, checked against the log over random changes ----------------------------


def _model_trim(entries: list, limit: int | None, keep: int) -> None:
    """Drop the oldest (leftmost) entries other than the one at ``keep`` while over ``limit``."""
    while limit is not None and sum(map(_cost, entries)) > limit and len(entries) > 1:
        drop = 0 if keep > 0 else 1
        del entries[drop]
        keep -= drop == 0


def _model_trim_right(entries: list, limit: int | None) -> None:
    """Drop the rightmost entries but the leftmost while over ``limit``."""
    while limit is not None and sum(map(_cost, entries)) > limit and len(entries) > 1:
        del entries[-1]


@pytest.mark.parametrize(("maxlen", "units"), [(None, 5), (4, 6), (8, 3), (None, None), (3, None)])
def test_random_changes_match_the_rules(maxlen, units):
    rng = random.Random(f"{maxlen}-{units}")
    limit = None if units is None else units * UNIT
    log = RequestLog(maxlen=maxlen, max_bytes=limit)
    model: list[RecordedRequest] = []
    serial = 0

    def new() -> RecordedRequest:
        nonlocal serial
        serial += 1
        return _record(serial, rng.choice([10, 100, 100, 300, 700]))

    def add(record: RecordedRequest, left: bool) -> None:
        if maxlen is not None and len(model) == maxlen:
            model.pop(-1 if left else 0)
        if left:
            model.insert(0, record)
            _model_trim_right(model, limit)
        else:
            model.append(record)
            _model_trim(model, limit, len(model) - 1)

    for _ in range(400):
        op = rng.choice(["append", "appendleft", "extend", "extendleft", "iadd", "insert", "setitem", "imul", "pop", "rotate", "remove"])
        if op in ("append", "appendleft"):
            record = new()
            getattr(log, op)(record)
            add(record, op == "appendleft")
        elif op in ("extend", "extendleft", "iadd"):
            records = [new() for _ in range(rng.randrange(4))]
            if op == "iadd":
                log += records
            else:
                getattr(log, op)(records)
            for record in records:
                add(record, op == "extendleft")
        elif op == "insert":
            record, at = new(), rng.randrange(-6, 7)
            if maxlen is not None and len(model) == maxlen:
                with pytest.raises(IndexError):
                    log.insert(at, record)
            else:
                log.insert(at, record)
                model.insert(at, record)
                _model_trim(model, limit, model.index(record))
        elif op == "setitem" and model:
            record, at = new(), rng.randrange(-len(model), len(model))
            log[at] = record
            model[at] = record
            _model_trim(model, limit, model.index(record))
        elif op == "imul" and model:
            times = rng.choice([0, 1, 2, 3])
            log *= times
            copies = list(model) * times
            del model[:]
            for record in copies:
                add(record, False)
        elif op == "pop" and model:
            assert log.pop() == model.pop()
        elif op == "rotate":
            steps = rng.randrange(-3, 4)
            log.rotate(steps)
            shifted = deque(model)
            shifted.rotate(steps)
            model[:] = shifted
        elif op == "remove" and model:
            record = rng.choice(model)
            log.remove(record)
            model.remove(record)
        assert _indexes(log) == [r.index for r in model], op
        _bounded(log)
