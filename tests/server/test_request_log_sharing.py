"""What a logged request leaves for the garbage collector (issue 9: collections cost ~4 us a
request over HTTP with ~14 new tracked objects per new conversation turn; now ~5)."""

from __future__ import annotations

import json

from mockoss.harmony.prompt import count
from mockoss.server import records
from mockoss.server.core import MockServer
from mockoss.server.records import header_items


def test_header_items_equal_the_headers_and_share_pairs_seen_before():
    first = {"host": "127.0.0.1:8000", "content-type": "application/json", "content-length": "99"}
    second = dict(first, **{"content-length": "100"})
    a, b = header_items(first), header_items(second)
    assert a == tuple(first.items()) and b == tuple(second.items())
    assert a[0] is b[0] and a[1] is b[1]  # the same pair objects
    assert a[2] is not b[2]


def test_the_shared_pairs_stay_bounded(monkeypatch):
    monkeypatch.setattr(records, "_PAIRS", {})
    monkeypatch.setattr(records, "_shared", [0])
    monkeypatch.setattr(records, "_SHARED_PAIRS", 50)
    for n in range(500):
        assert header_items({"x-request": f"id-{n}", "huge": "v" * 1000}) == (("x-request", f"id-{n}"), ("huge", "v" * 1000))
    assert sum(map(len, records._PAIRS.values())) == 50
    assert "huge" not in records._PAIRS  # long values are never kept
    long_name = "n" * 16_000  # a review's reproducer: 4,096 such names held 64 MB for good
    assert header_items({long_name: "v"}) == ((long_name, "v"),)
    assert long_name not in records._PAIRS


def test_the_same_headers_again_share_one_tuple_and_the_tuples_stay_bounded(monkeypatch):
    monkeypatch.setattr(records, "_ITEMS", {})
    monkeypatch.setattr(records, "_SHARED_ITEMS", 3)
    sent = {"host": "127.0.0.1:8000", "content-type": "application/json", "content-length": "151"}
    first, again = header_items(sent), header_items(dict(sent))
    assert first == again == tuple(sent.items()) and again is first  # nothing new for the collector
    for n in range(10):
        header_items(dict(sent, **{"content-length": str(n)}))
    assert len(records._ITEMS) == 3  # the first three sets of headers, no more
    unshared = {"x-big": "v" * 1000}  # a pair too long to share: its tuple is not kept either
    assert header_items(unshared) == (("x-big", "v" * 1000),) and header_items(unshared) is not header_items(unshared)


def test_logged_requests_keep_their_headers_as_sent():
    server = MockServer("clean-answer")
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()
    for n in range(3):
        server.handle("chat", body, {"x-n": str(n), "accept": "application/json"})
    assert [r.headers for r in server.requests] == [{"x-n": str(n), "accept": "application/json"} for n in range(3)]


def test_plain_message_counts_are_shared_values():
    assert count._plain(17, count._USER_TURNS, False, None) is count._plain(17, count._USER_TURNS, False, None)
    assert count._plain(17, count._USER_TURNS, False, None) == (17, False, ((17, False, None),))
    assert count._plain(17, count._FINAL_TURNS, True, "final") == (17, False, ((17, True, "final"),))
    big = count._SHARED_COUNTS + 5
    assert count._plain(big, count._USER_TURNS, False, None) == (big, False, ((big, False, None),))
