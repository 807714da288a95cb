"""A body sent again is not validated again, and the request log keeps each entry's cost.

Issue 9's repeated-body target (``benchmarks/bench_http.py`` "chat repeated"): the validated
request of a body seen before is kept (``MockServer._validate``), and a log entry's byte cost is
computed once (``RequestLog``). These tests pin that the shortcut answers exactly what full
validation answers, and where it must not apply.
"""

from __future__ import annotations

import json

import pytest

from mockoss.server import core, request_check
from mockoss.server.core import MockServer
from mockoss.server.records import RecordedRequest, RequestLog, _cost, new_record

MODEL = "openai/gpt-oss-20b"


def _chat(content: str = "What is 2 + 2?", **extra) -> bytes:
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}], **extra}).encode()


@pytest.fixture
def validations(monkeypatch):
    """Counts the schema validations ``MockServer._validate`` runs."""
    calls: list[object] = []
    real = request_check.validate_request

    def counted(schema, body):
        calls.append(body)
        return real(schema, body)

    monkeypatch.setattr(request_check, "validate_request", counted)
    return calls


def _replies(server: MockServer, raw: bytes, times: int, headers=None) -> list[tuple[int, bytes]]:
    out = []
    for _ in range(times):
        reply = server.handle("chat", raw, headers or {})
        out.append((reply.status, reply.body))
    return out


def test_a_body_sent_again_is_validated_twice_then_never(validations):
    server = MockServer("clean-answer")
    raw = _chat()
    replies = _replies(server, raw, 5)
    # First sighting: validated and remembered by hash; second: validated and stored; then kept.
    assert len(validations) == 2
    assert [status for status, _ in replies] == [200] * 5
    other = _chat("something else")
    server.handle("chat", other, {})
    assert len(validations) == 3  # another body is validated


def test_kept_validation_answers_byte_for_byte_what_full_validation_answers(validations):
    raw = _chat(tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])
    cached = MockServer("clean-answer", seed=7)
    fresh = MockServer("clean-answer", seed=7)
    got = _replies(cached, raw, 4)
    expected = []
    for _ in range(4):
        fresh._valid_bodies.clear()  # every request validated in full
        expected.append(_replies(fresh, raw, 1)[0])
    assert got == expected
    assert len(validations) == 2 + 4


def test_an_invalid_body_is_refused_every_time_and_never_kept(validations):
    server = MockServer("clean-answer")
    raw = json.dumps({"model": MODEL, "messages": "not a list"}).encode()
    statuses = [status for status, _ in _replies(server, raw, 3)]
    assert statuses == [400, 400, 400]
    assert len(validations) == 3
    assert len(server._valid_bodies) == 0


def test_the_model_is_checked_on_every_request_even_for_a_kept_body():
    server = MockServer("clean-answer")
    raw = _chat()
    assert [s for s, _ in _replies(server, raw, 3)] == [200, 200, 200]
    assert len(server._valid_bodies) == 1
    server.served_model_names = ("another/model",)
    status, body = _replies(server, raw, 1)[0]
    assert status == 404
    assert json.loads(body)["error"]["message"] == f"The model `{MODEL}` does not exist."


def test_a_new_profile_or_reset_forgets_kept_bodies(validations):
    server = MockServer("clean-answer")
    raw = _chat()
    _replies(server, raw, 3)
    assert len(validations) == 2
    server.set_switches({})
    _replies(server, raw, 1)
    assert len(validations) == 3  # the new base profile validates again
    server.reset()
    assert len(server._valid_bodies) == 0
    server.set_profile("sglang")
    assert [s for s, _ in _replies(server, raw, 3)] == [200] * 3
    assert len(validations) == 3 + 2  # reset emptied the store: twice more, then kept


def test_a_profile_with_its_own_request_check_always_validates():
    # gptoss-reference validates with its server's own models and hands the result to its reply
    # (check_request): nothing of it may be skipped.
    server = MockServer("clean-answer", profile="gptoss-reference")
    raw = json.dumps({"model": MODEL, "input": "hi"}).encode()
    for _ in range(3):
        assert server.handle("responses", raw, {}).status == 200
    assert len(server._valid_bodies) == 0


def test_kept_bodies_are_bounded_in_bytes():
    server = MockServer("clean-answer")
    server._valid_bodies.limit = 64 * 1024
    for n in range(200):
        raw = _chat(f"question {n} " + "x" * 400)
        _replies(server, raw, 2)
    assert 0 < server._valid_bodies.size <= 64 * 1024
    assert len(server._valid_bodies) < 200


# -- the request log's costs --------------------------------------------------------------------


def _record(n: int, size: int = 100) -> RecordedRequest:
    return RecordedRequest(n, "chat", b"x" * size, (("host", "h"),), None, None, 200, None)


def test_new_record_builds_the_same_record_as_the_dataclass():
    values = (3, "chat", b"{}", (("host", "h"),), "s", 1, 200, "text", "#1", 2, None, ("w",), False, ("log",))
    assert new_record(*values) == RecordedRequest(*values)
    assert repr(new_record(*values)) == repr(RecordedRequest(*values))
    with pytest.raises(ValueError, match="14 fields"):
        new_record(*values[:8])


def test_the_log_total_stays_the_sum_of_its_entries_through_every_change():
    log = RequestLog(maxlen=4, max_bytes=10_000)
    for n in range(10):
        log.append(_record(n, 100 + n))
    assert [r.index for r in log] == [6, 7, 8, 9]
    assert log.bytes == sum(map(_cost, log))
    assert log.popleft().index == 6 and log.pop().index == 9
    assert log.bytes == sum(map(_cost, log))
    log.appendleft(_record(20, 3000))
    log.extend([_record(21), _record(22)])  # maxlen drops from the left
    log.remove(log[1])
    assert log.bytes == sum(map(_cost, log))
    log.append(_record(23))
    assert log.bytes == sum(map(_cost, log))
    log.clear()
    assert log.bytes == 0 and len(log) == 0
    log.append(_record(30))
    assert log.bytes == _cost(log[0])


def test_the_byte_bound_drops_the_oldest_entries():
    log = RequestLog(max_bytes=3 * _cost(_record(0)))
    for n in range(10):
        log.append(_record(n))
    assert [r.index for r in log] == [7, 8, 9]
    assert log.bytes == sum(map(_cost, log)) <= log.max_bytes


def test_a_log_of_no_entries_keeps_nothing_and_counts_nothing():
    log = RequestLog(maxlen=0)
    log.append(_record(1))
    assert len(log) == 0 and log.bytes == 0


def test_big_bodies_are_always_validated(validations):
    server = MockServer("clean-answer")
    raw = _chat("y" * (core.VALID_BODY_MAX + 1))
    _replies(server, raw, 3)
    assert len(validations) == 3
    assert len(server._valid_bodies) == 0



def test_copies_and_products_of_the_log_keep_its_bounds_and_its_total():
    # A review's finding: *=, *, + and copies went around the kept costs, and copies fell back to
    # the default byte budget.
    import copy
    import pickle

    log = RequestLog(maxlen=50, max_bytes=None)
    for n in range(5):
        log.append(_record(n, 100 * n))
    log *= 2
    made = [log, log * 2, 2 * log, log + log, copy.copy(log), copy.deepcopy(log), log.copy(), pickle.loads(pickle.dumps(log))]
    for other in made:
        assert isinstance(other, RequestLog)
        assert (other.maxlen, other.max_bytes) == (50, None)
        assert other.bytes == sum(map(_cost, other)) and len(other._costs) == len(other)
    assert len(log) == 10 and len(made[1]) == 20


def test_the_cost_counts_warnings_and_server_log_lines():
    plain = new_record(0, "chat", b"{}", (), None, None, 200, None, None, None, None, (), False, ())
    noted = new_record(0, "chat", b"{}", (), None, None, 200, None, None, None, None, ("w" * 100,), False, ("l" * 50,))
    assert _cost(noted) - _cost(plain) == 150


# -- a second review's findings ---------------------------------------------------------------------


def test_a_kept_validation_never_stands_in_for_a_body_that_did_not_parse():
    # The same bytes can fail to parse on a deeper stack (json.loads past jiter's depth), and the
    # kept request then answered a None body: an unscripted 500.
    server = MockServer("clean-answer")
    raw = _chat()
    _replies(server, raw, 3)
    assert len(server._valid_bodies) == 1
    checked = server._validate("chat", None, raw)
    assert getattr(checked, "status", None) == 400


def test_a_kept_validation_is_costed_by_what_it_holds():
    server = MockServer("clean-answer")
    content = [{"type": "text", "text": ""} for _ in range(250)]
    raw = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()
    assert len(raw) <= core.VALID_BODY_MAX
    _replies(server, raw, 2)
    assert len(server._valid_bodies) == 1
    stated_before = 5 * raw.__sizeof__() + 2048 + 160  # the entry's stated cost before the review
    assert server._valid_bodies.size > 2 * stated_before  # 102 KB held against 40 KB stated


def test_each_test_id_session_keeps_a_small_share_of_kept_validations():
    from mockoss.server.control import SESSION_VALID_BODY_BYTES, ControlPlane

    plane = ControlPlane(MockServer("clean-answer"))
    session = plane.session("test-a")
    assert session.server._valid_bodies.limit == SESSION_VALID_BODY_BYTES < core.VALID_BODY_BYTES


def test_a_server_that_keeps_no_log_still_answers():
    server = MockServer("clean-answer", request_log_limit=0)
    assert server.handle("chat", _chat(), {}).status == 200
    assert len(server.requests) == 0


@pytest.mark.parametrize("kind", ["agent", "responses"])
def test_kept_validation_answers_what_full_validation_answers_for_agent_and_responses_bodies(validations, kind):
    tools = [{"type": "function", "function": {"name": f"tool_{n}", "parameters": {"type": "object"}}} for n in range(3)]
    turns = [{"role": "user" if n % 2 == 0 else "assistant", "content": f"turn {n}"} for n in range(11)]
    if kind == "agent":  # 11 messages: the validation's prefix lookup applies (seen.py)
        endpoint, raw = "chat", json.dumps({"model": MODEL, "messages": turns, "tools": tools}).encode()
        grown = json.dumps({"model": MODEL, "messages": [*turns, {"role": "assistant", "content": "more"}], "tools": tools}).encode()
    else:
        endpoint = "responses"
        raw = json.dumps({"model": MODEL, "input": [{"type": "message", **t} for t in turns]}).encode()
        grown = json.dumps({"model": MODEL, "input": [{"type": "message", **t} for t in [*turns, {"role": "user", "content": "more"}]]}).encode()
    cached, fresh = MockServer("clean-answer", seed=3), MockServer("clean-answer", seed=3)
    got, expected = [], []
    for body in (raw, raw, grown, raw, grown, raw):
        reply = cached.handle(endpoint, body, {})
        got.append((reply.status, reply.body))
        fresh._valid_bodies.clear()
        reply = fresh.handle(endpoint, body, {})
        expected.append((reply.status, reply.body))
    assert got == expected
    assert len(cached._valid_bodies) == 2  # both bodies were kept, and answered the same
