"""Normalisation of answers for the golden comparison (mockoss.golden.normalise, issue 8)."""

from __future__ import annotations

import json

import pytest

from mockoss.golden.normalise import (
    Normaliser,
    dumps,
    id_shape,
    normalise_body,
    normalise_frames,
    normalise_json,
    split_sse,
)


def test_ids_become_prefix_shape_and_number_in_order_of_first_appearance() -> None:
    body = {
        "id": "chatcmpl-0123456789abcdef",
        "created": 1767225600,
        "choices": [
            {"message": {"tool_calls": [
                {"id": "chatcmpl-tool-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "function": {"name": "f"}},
                {"id": "chatcmpl-tool-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "function": {"name": "g"}},
            ]}}
        ],
        "system_fingerprint": "vllm-0.32.0-Ab3dE9fGh1",
    }
    assert normalise_json(body) == {
        "id": "<chatcmpl-:hex16#1>",
        "created": "<TIME>",
        "choices": [
            {"message": {"tool_calls": [
                {"id": "<chatcmpl-:tool-hex32#2>", "function": {"name": "f"}},
                {"id": "<chatcmpl-:tool-hex32#3>", "function": {"name": "g"}},
            ]}}
        ],
        "system_fingerprint": "<vllm-:0.32.0-alnum10#1>",
    }


def test_reuse_of_one_id_across_frames_keeps_its_number() -> None:
    frames = [
        'event: response.output_item.added\ndata: {"item":{"id":"rs_1111111111111111","type":"reasoning"}}\n\n',
        'event: response.output_item.added\ndata: {"item":{"id":"msg_2222222222222222","type":"message"}}\n\n',
        'event: response.content_part.added\ndata: {"item_id":"rs_1111111111111111"}\n\n',
        'event: response.content_part.added\ndata: {"item_id":"rs_3333333333333333"}\n\n',
    ]
    assert normalise_frames(frames) == [
        'event: response.output_item.added\ndata: {"item":{"id":"<rs_:hex16#1>","type":"reasoning"}}',
        'event: response.output_item.added\ndata: {"item":{"id":"<msg_:hex16#1>","type":"message"}}',
        'event: response.content_part.added\ndata: {"item_id":"<rs_:hex16#1>"}',
        'event: response.content_part.added\ndata: {"item_id":"<rs_:hex16#2>"}',
    ]


def test_a_reused_id_and_two_distinct_ids_normalise_differently() -> None:
    same = normalise_frames(['data: {"id":"chatcmpl-aaaaaaaaaaaaaaaa"}', 'data: {"id":"chatcmpl-aaaaaaaaaaaaaaaa"}'])
    distinct = normalise_frames(['data: {"id":"chatcmpl-aaaaaaaaaaaaaaaa"}', 'data: {"id":"chatcmpl-bbbbbbbbbbbbbbbb"}'])
    assert same != distinct


def test_key_order_is_kept() -> None:
    first = dumps(normalise_json({"name": "f", "arguments": "{}", "type": "function_call"}))
    second = dumps(normalise_json({"arguments": "{}", "name": "f", "type": "function_call"}))
    assert first == '{"name":"f","arguments":"{}","type":"function_call"}'
    assert first != second


@pytest.mark.parametrize(
    ("golden", "other"),
    [
        ("chatcmpl-0123456789abcdef", "chatcmpl-0123456789abcdef0123456789abcdef"),  # 16 vs 32 hex digits
        ("resp_0123456789abcdef", "resp_Ab3dE9fGh1Jk2Lm4"),  # hex vs alphanumeric
        ("rs_0123456789abcdef", "msg_0123456789abcdef"),  # another prefix
        ("chatcmpl-tool-0123456789abcdef", "call_0123456789abcdef"),
    ],
)
def test_a_wrong_id_shape_is_a_difference(golden: str, other: str) -> None:
    assert dumps(normalise_json({"id": golden})) != dumps(normalise_json({"id": other}))


def test_strings_are_ids_by_key_or_by_prefix_only() -> None:
    value = {
        "text": "call_me maybe",  # a space: not an id
        "note": "resp_0123456789abcdef",  # a known prefix: an id, whatever the key
        "name": "get_weather",  # no prefix, not an id key
        "type": "mcp_call",  # a prefix, but nothing random after it: a word
        "id": None,
        "created_at": None,
    }
    assert normalise_json(value) == {
        "text": "call_me maybe",
        "note": "<resp_:hex16#1>",
        "name": "get_weather",
        "type": "mcp_call",
        "id": None,
        "created_at": None,
    }


def test_id_shape_keeps_short_pieces_and_describes_random_ones() -> None:
    assert id_shape("0123456789abcdef") == "hex16"
    assert id_shape("Ab3dE9fGh1Jk2Lm4Np5Qr6St") == "alnum24"
    assert id_shape("tool-0123456789abcdef") == "tool-hex16"
    assert id_shape("a.b+c=d/e") == "chars9"


def test_done_event_lines_and_non_json_data_stay_verbatim() -> None:
    assert normalise_frames(["data: [DONE]\n\n", "\n\n", "event: error\ndata: not json"]) == [
        "data: [DONE]",
        "event: error\ndata: not json",
    ]


def test_frames_dump_compact_and_unescaped() -> None:
    assert Normaliser().frame('data: {"delta": "caf\\u00e9", "n": [1, 2]}') == 'data: {"delta":"café","n":[1,2]}'


def test_bodies_that_are_not_json_stay_text() -> None:
    assert normalise_body(b"Internal Server Error") == "Internal Server Error"
    assert normalise_body(json.dumps({"id": "cmpl-0123456789abcdef"}).encode()) == {"id": "<cmpl-:hex16#1>"}


def test_split_sse_splits_on_blank_lines() -> None:
    raw = b'data: {"a":1}\r\n\r\nevent: x\ndata: {"b":2}\n\ndata: [DONE]\n\n'
    assert split_sse(raw) == ['data: {"a":1}', 'event: x\ndata: {"b":2}', "data: [DONE]"]
