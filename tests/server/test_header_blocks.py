"""The header-block cache of :func:`mockoss.server.request_headers.header_map` (issue 9,
eleventh-session review of 831991d, findings 4 and 5): bounded in pairs as well as bytes, and a
block whose ``content-length`` alone changed is the block seen before, not a new one."""

from __future__ import annotations

import tracemalloc

import pytest

from mockoss.scenario.conversation import SharedHeaders
from mockoss.server import records, request_headers
from mockoss.server.control import header_map
from mockoss.server.records import header_items

BLOCK = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"), (b"user-agent", b"OpenAI/Python 2.8.1")]


_PAIRS_MAX = getattr(request_headers, "_BLOCK_PAIRS", 32)  # (831991d had no cap on pairs)


def _map(headers: list) -> dict:
    return header_map({"type": "http", "headers": headers, "state": {}})


@pytest.fixture
def blocks(monkeypatch):
    monkeypatch.setattr(request_headers, "_BLOCKS", {})
    return request_headers._BLOCKS


def _expected(raw: list) -> dict:
    made: dict = {}
    for name, value in raw:
        made.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return made


def test_a_growing_conversation_reuses_its_block(blocks, monkeypatch):
    # Finding 5: content-length was part of the key, so every turn of an agent's growing
    # conversation was a new block (decoded, its log pairs made, kept): more than the old build.
    built = []
    monkeypatch.setattr(request_headers, "header_items", lambda h: built.append(1) or header_items(h))
    for place in (0, 1, 3):  # where the client puts content-length
        for length in range(1000, 1040):
            raw = [*BLOCK[:place], (b"content-length", str(length).encode()), *BLOCK[place:]]
            made = _map(raw)
            assert type(made) is SharedHeaders and made == _expected(raw) and list(made) == list(_expected(raw))
            assert made.pairs == tuple(made.items()) and made["content-length"] == str(length)
    assert len(blocks) == 3 and len(built) == 3  # one block (and one decoding) per place, not per length
    again = [*BLOCK, (b"content-length", b"1039")]
    assert _map(again) is _map(list(again))  # the same length again: the same map


def test_blocks_without_a_lower_case_content_length_first_are_still_right(blocks):
    cases = (
        [*BLOCK],  # none
        [(b"Content-Length", b"7"), *BLOCK, (b"content-length", b"8")],  # the first (other case) wins
        [*BLOCK, (b"content-length", b"5"), (b"content-length", b"6")],
    )
    for raw in cases:
        for _ in range(2):
            assert _map(list(raw)) == _expected(raw) and _map(list(raw)).pairs == tuple(_expected(raw).items())
    changed = [*BLOCK, (b"content-length", b"9"), (b"content-length", b"6")]
    assert _map(changed)["content-length"] == "9"
    odd = [(b"Content-Length", b"70"), *BLOCK, (b"content-length", b"80")]
    assert _map(odd)["content-length"] == "70"


def test_a_block_of_many_pairs_is_not_kept(blocks):
    # Finding 4: only the bytes were bounded, so 512 blocks of 500 short pairs (<= 2 KB) held
    # 34.7 MB against the "~2 MB at most" stated.
    many = [(b"x-%d" % i, b"") for i in range(_PAIRS_MAX + 1)]
    assert len(b"".join(n + v for n, v in many)) <= request_headers._BLOCK_BYTES
    assert _map(list(many)) == _expected(many)
    assert not blocks


def test_the_blocks_hold_under_two_megabytes_at_worst(blocks, monkeypatch):
    monkeypatch.setattr(records, "_shared", [records._SHARED_PAIRS])  # no pair shared with the log's table
    pairs = _PAIRS_MAX
    shapes = (
        lambda n: [(b"x", b"%d" % n)] + [(b"%c%c" % (65 + i // 26, 97 + i % 26), b"") for i in range(pairs - 1)],
        lambda n: [(b"x", b"%d" % n)] + [(b"h%d" % i, b"v" * 60) for i in range(pairs - 2)] + [(b"content-length", b"1234")],
        lambda n: [(b"x", b"%d" % n)] + [(b"%c%c" % (65 + i // 26, 97 + i % 26), b"") for i in range(400)],  # the review's: too many pairs
    )
    for shape in shapes:
        blocks.clear()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(request_headers._BLOCKS_MAX):
                _map(shape(n))
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert held < 2_000_000
    assert len(blocks) <= request_headers._BLOCKS_MAX


def test_a_logged_request_with_a_new_length_logs_its_own_headers(blocks):
    import json

    from mockoss.scenario.conversation import LowerCaseHeaders
    from mockoss.server.core import MockServer

    server = MockServer("clean-answer")
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()
    for length in (b"151", b"152"):
        raw = [*BLOCK, (b"content-length", length)]
        server.handle("chat", body, _map(raw))
        server.handle("chat", body, LowerCaseHeaders(_expected(raw)))  # as before the cache
    shared, plain = list(server.requests)[-2:]
    assert shared.header_items == plain.header_items and shared.headers == plain.headers
    assert shared.headers["content-length"] == "152" and records._cost(shared) == records._cost(plain)
