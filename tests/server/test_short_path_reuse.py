"""What the short request path reuses between requests and what it no longer builds per request
(issue 9, unique-body chat): the header map of a header block seen before, its log pairs and
their byte count, and no closure on the non-streamed short path."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from mockoss.scenario.conversation import LowerCaseHeaders, SharedHeaders
from mockoss.server import inputs, records, request_headers
from mockoss.server.control import header_map
from mockoss.server.core import MockServer
from mockoss.server.fastpath import GenerationPath
from mockoss.server.records import RequestLog, _cost, header_items


def _scope(headers: list[tuple[bytes, bytes]]) -> dict:
    return {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": headers, "state": {}}


BLOCK = [(b"host", b"127.0.0.1:8000"), (b"Content-Type", b"application/json"), (b"content-length", b"151")]


def test_the_same_header_block_gives_the_same_read_only_map_and_log_pairs():
    first = header_map(_scope(list(BLOCK)))
    again = header_map(_scope([(bytes(n), bytes(v)) for n, v in BLOCK]))  # equal bytes, new objects
    assert again is first and type(first) is SharedHeaders
    assert first == {"host": "127.0.0.1:8000", "content-type": "application/json", "content-length": "151"}
    assert first.pairs == tuple(first.items()) and first.pairs is header_items(dict(first))
    other = header_map(_scope([*BLOCK[:2], (b"content-length", b"152")]))
    assert other is not first and other["content-length"] == "152"
    reordered = header_map(_scope([BLOCK[1], BLOCK[0], BLOCK[2]]))  # another block: its own map and order
    assert reordered is not first and list(reordered) == ["content-type", "host", "content-length"]
    for change in (lambda h: h.__setitem__("x", "1"), lambda h: h.pop("host"), lambda h: h.update(x="1"), lambda h: h.clear(), lambda h: h.setdefault("x", "1")):
        with pytest.raises(TypeError):
            change(first)
    assert len(first) == 3
    for made in (copy.copy(first), copy.deepcopy(first), pickle.loads(pickle.dumps(first))):
        assert type(made) is LowerCaseHeaders and made == first


def test_repeated_names_keep_the_first_value_and_unhashable_pairs_still_work():
    assert header_map(_scope([(b"x-a", b"1"), (b"X-A", b"2")])) == {"x-a": "1"}
    listed = header_map(_scope([[b"host", b"h"], [b"x-b", b"2"]]))  # pairs as lists (ASGI allows any iterable)
    assert listed == {"host": "h", "x-b": "2"} and listed.pairs == (("host", "h"), ("x-b", "2"))


def test_the_header_blocks_stay_bounded(monkeypatch):
    monkeypatch.setattr(request_headers, "_BLOCKS", {})
    monkeypatch.setattr(request_headers, "_BLOCKS_MAX", 4)
    for n in range(10):
        header_map(_scope([(b"x-id", str(n).encode())]))
    assert 1 <= len(request_headers._BLOCKS) <= 4
    big = [(b"authorization", b"Bearer " + b"t" * 4000)]
    made = header_map(_scope(big))
    assert made == {"authorization": "Bearer " + "t" * 4000}
    assert header_map(_scope(list(big))) is not made  # a block over _BLOCK_BYTES is not kept


def test_a_logged_request_keeps_its_block_pairs_and_their_cost_is_summed_once(monkeypatch):
    monkeypatch.setattr(request_headers, "_BLOCKS", {})  # BLOCK's first map (another length came before)
    server = MockServer("clean-answer")
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()
    headers = header_map(_scope(list(BLOCK)))
    server.handle("chat", body, headers)
    server.handle("chat", body, headers)
    first, second = server.requests
    assert first.header_items is headers.pairs and second.header_items is headers.pairs
    assert first.headers == dict(headers)
    assert records._ITEMS_COST[id(headers.pairs)] == (headers.pairs, sum(len(n) + len(v) + 64 for n, v in headers.pairs))
    by_hand = records.new_record(0, "chat", b"{}", [("a", "b")], None, None, 200, None, None, None, None, (), False, ())
    unhashable = records.new_record(0, "chat", b"{}", (("a", ["b"]),), None, None, 200, None, None, None, None, (), False, ())
    assert _cost(by_hand) == _cost(unhashable) == records._ENTRY_OVERHEAD + 2 + 2 + 64  # summed, not kept
    log = RequestLog([first, by_hand])
    assert log.bytes == _cost(first) + _cost(by_hand)


def test_an_ascii_echoed_field_is_not_walked(monkeypatch):
    walked = []
    original = inputs._has_lone_surrogate
    monkeypatch.setattr(inputs, "_has_lone_surrogate", lambda value: walked.append(value) or original(value))
    assert inputs.lone_surrogate_field({"model": "openai/gpt-oss-20b", "messages": []}) is None
    assert walked == []
    assert inputs.lone_surrogate_field({"model": "caf\u00e9\ud800"}) == "model"
    assert inputs.lone_surrogate_field({"model": "ok", "metadata": {"k": "\udc00"}}) == "metadata"


def test_the_short_path_makes_no_closure_per_request():
    # Every variable an inner function reads becomes a cell the call creates, and each inner
    # function is a new object per call: the non-streamed reply must not pay for the stream's.
    assert GenerationPath.__call__.__code__.co_cellvars == ()
    assert GenerationPath._stream.__code__.co_cellvars  # the stream keeps its callbacks


def test_the_content_type_pair_is_made_once_per_media_type_and_is_starlettes():
    from starlette.responses import Response

    from mockoss.profiles.base import Reply
    from mockoss.server import fastpath

    for media in ("application/json", "text/plain", "text/event-stream; charset=utf-8", "application/x-ndjson"):
        first = Reply(status=200, media_type=media, body=b"{}")
        again = Reply(status=201, media_type=media, body=b"[1, 2]")
        assert fastpath.plain_head(first)[-1] is fastpath.plain_head(again)[-1]  # shared, not rebuilt
        for reply in (first, again):
            assert fastpath.plain_head(reply) == Response(reply.body, reply.status, media_type=media).raw_headers
    assert len(fastpath._CONTENT_TYPES) <= 64
