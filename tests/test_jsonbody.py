"""mockoss.jsonbody.parse_json gives exactly what json.loads gives (value or exception type)."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest

from mockoss.jsonbody import parse_json


def _outcome(parse, raw: bytes):
    try:
        value = parse(raw)
    except (ValueError, RecursionError) as exc:
        return ("error", type(exc))
    return ("value", type(value), json.dumps(value, allow_nan=True), repr(value))


EDGES = [
    b'{"a":"\\ud800"}',  # lone surrogate escape: jiter refuses, json.loads keeps it
    b'{"\\udfff":1}',
    b'{"a":"\xed\xa0\x80"}',  # a surrogate as UTF-8-style bytes: json.loads decodes it (surrogatepass)
    b'\xef\xbb\xbf{"a":1}',  # UTF-8 byte-order mark
    '{"a":"é"}'.encode("utf-16"),
    '{"a":"é"}'.encode("utf-32-le"),
    b"[" * 300 + b"]" * 300,  # deeper than jiter nests, not than Python recurses
    b"[" * 100_000 + b"]" * 100_000,  # deeper than Python recurses: RecursionError
    b'{"a":NaN,"b":Infinity,"c":-Infinity}',
    b'{"a":1e400,"b":-1e400,"c":1e-400,"d":-0.0,"e":-0}',
    b'{"a":123456789012345678901234567890123456789,"b":-18446744073709551617}',
    b'{"a":1,"a":2}',
    b'{"a":"x\x01"}',  # a raw control character: both refuse
    b"[1,]",
    b'{"a":01}',
    b'{"a":.5}',
    b'{"a":"\\x41"}',
    b'{"a":1}x',
    b"",
    b"\xff",
    b'"text"',
    b" \n{\"a\" : [true, false, null]}\t",
    b'{"a":"\\u0000\\ud83d\\ude00"}',
]


@pytest.mark.parametrize("raw", EDGES, ids=range(len(EDGES)))
def test_edges_parse_as_json_loads_does(raw: bytes) -> None:
    assert _outcome(parse_json, raw) == _outcome(json.loads, raw)


def test_random_numbers_and_strings_parse_as_json_loads_does() -> None:
    rng = random.Random(9)
    for _ in range(20_000):
        kind = rng.random()
        if kind < 0.3:
            x = struct.unpack("d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            text = repr(x) if math.isfinite(x) else "1"
        elif kind < 0.6:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 30)))
            text = f"{'-' if rng.random() < 0.3 else ''}{rng.randrange(10**rng.randrange(1, 25))}.{digits}"
            text += f"e{rng.randrange(-330, 330)}" if rng.random() < 0.5 else ""
        else:
            text = f"{'-' if rng.random() < 0.5 else ''}{rng.getrandbits(rng.randrange(1, 200))}"
        raw = f'{{"n":[{text}]}}'.encode()
        assert _outcome(parse_json, raw) == _outcome(json.loads, raw), raw
    for _ in range(5_000):
        points = [rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0x80, 0xD800), rng.randrange(0xE000, 0x110000), 0x22, 0x5C, 0x0A]) for _ in range(rng.randrange(12))]
        text = "".join(map(chr, points))
        for ascii_only in (True, False):
            raw = json.dumps({"k": text, text: [text, {"": text}]}, ensure_ascii=ascii_only).encode()
            assert _outcome(parse_json, raw) == _outcome(json.loads, raw), raw
