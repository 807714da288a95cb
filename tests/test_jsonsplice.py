"""A body parsed from a kept body's elements (mockoss.jsonsplice) is exactly json.loads' value.

vLLM and the other servers parse a request body with ``json.loads`` (FastAPI's ``Request.json()``),
so mockoss must see the same value, types and key order included, or the same error, for every
body: here the value of :meth:`SpliceCache.parse` is compared with ``json.loads`` on bodies edited
at every point of a kept body (insertions, deletions, replacements), on agent conversations that
grow turn by turn, and on the cases the module docstring names (numbers at a cut, duplicate keys,
whitespace, escapes, truncation, deep nesting).
"""

from __future__ import annotations

import json
import math
import random
import sys

import pytest

from mockoss import jsonbody
from mockoss.harmony.prompt.caches import clear_caches
from mockoss.jsonsplice import RECENT, SKIP_AFTER_WASTED_READ, SpliceCache


def same(a: object, b: object) -> bool:
    """Equal JSON values with equal types and key order (``1``, ``1.0`` and ``True`` differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))  # type: ignore[arg-type]
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))  # type: ignore[arg-type]
    return a == b


def outcome(parse, text: str) -> tuple[str, object]:
    try:
        return ("value", parse())
    except (ValueError, RecursionError) as exc:
        return ("error", (type(exc), str(exc)))


def check(cache: SpliceCache, text: str) -> None:
    """``cache.parse(text)`` gives ``json.loads(text)``'s value or error; the cache's state is
    left as it was (each edit is checked against the same kept bodies)."""
    before = cache._bodies
    try:
        got = outcome(lambda: cache.parse(text, lambda: json.loads(text)), text)
    finally:
        cache._bodies = before
    want = outcome(lambda: json.loads(text), text)
    assert got[0] == want[0], (text, got, want)
    if got[0] == "value":
        assert same(got[1], want[1]), (text, got[1], want[1])
    else:
        assert got[1] == want[1], text


def kept_unread(*texts: str) -> SpliceCache:
    """A cache holding ``texts`` kept but not read (each parsed once): the next body that shares
    half of one reads it (the path of the breaker's finding 1)."""
    cache = SpliceCache(1 << 24, 1 << 20)
    for text in texts:
        cache.parse(text, lambda text=text: json.loads(text))
    return cache


def kept(*texts: str) -> SpliceCache:
    """A cache holding ``texts`` read element by element (each parsed twice: kept, then read)."""
    cache = SpliceCache(1 << 24, 1 << 20)
    for text in texts:
        cache.parse(text, lambda text=text: json.loads(text))
        cache.parse(text, lambda text=text: json.loads(text))
    return cache


def agent_body(turns: int, tools: bool = True, sep: tuple[str, str] = (",", ":")) -> str:
    messages: list[dict] = [{"role": "system", "content": "You are a careful coding agent."}]
    for k in range(turns):
        messages.append({"role": "user", "content": f"Step {k}: fix src/m{k}.py — naïve “quotes” \u00e9 \U0001f600"})
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": f"m{k}"})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"line {k}\n\tindented \\ back"})
    body: dict = {"model": "openai/gpt-oss-20b", "messages": messages}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "parameters": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0.5}}},
                },
            }
        ]
        body["temperature"] = 0.7
        body["stream"] = False
    return json.dumps(body, separators=sep, ensure_ascii=False)


EDITS = [
    "",
    " ",
    "\n",
    "1",
    "0",
    "-",
    ".",
    "e",
    ",",
    ":",
    "]",
    "}",
    "[",
    "{",
    '"',
    "\\",
    "\\u00e9",
    "\ud800",
    "\x00",
    "null",
    ',"x":1',
    '{"role":"user","content":"new"},',
    "é",
]


@pytest.mark.parametrize("read", [True, False])
def test_every_edit_of_a_kept_body_parses_as_json_loads(read: bool) -> None:
    base = agent_body(3)
    cache = kept(base) if read else kept_unread(base)
    assert len(cache) == 1 and len(cache._bodies[0].ends) == (10 if read else 0)  # read: every message's end
    for p in range(1, len(base) + 1):
        for edit in EDITS:
            check(cache, base[:p] + edit + base[p:])  # an insertion
        check(cache, base[: p - 1] + base[p:])  # a deletion
        check(cache, base[:p])  # a truncation
        check(cache, base[: p - 1] + "x" + base[p:])  # a replacement


def test_agent_turns_are_spliced_and_equal_json_loads() -> None:
    """Each turn repeats the previous one's messages and adds three: it is parsed from the kept
    body and equals json.loads. A body is read element by element when a later one shares half
    of it (the third turn reads the second), so from the fourth turn on the kept elements are the
    very objects of the previous turn's value."""
    cache = SpliceCache(1 << 24, 1 << 20)
    previous = None
    for turns in range(1, 40):
        text = agent_body(turns)
        value = cache.parse(text, lambda text=text: json.loads(text))
        assert same(value, json.loads(text))
        if turns >= 4:
            assert all(a is b for a, b in zip(value["messages"], previous["messages"]))
            assert value["tools"] is previous["tools"]
        previous = value


@pytest.mark.parametrize(
    "kept_text, text",
    [
        # Numbers at a cut: an element ending in a digit is never a cut (1 then 12).
        ('{"messages":[{"a":1},1,{"b":2}],"x":1}', '{"messages":[{"a":1},12,{"b":2}],"x":1}'),
        ('{"messages":[1,2,3,4,5,6,7,8]}', '{"messages":[1,2,3,4,5,6,7,89]}'),
        ('{"messages":[{"a":1},{"b":2}],"n":1}', '{"messages":[{"a":1},{"b":2}],"n":12}'),
        # Duplicate keys: the later value, in the first one's place.
        ('{"messages":[{"a":1},{"b":2}],"tools":[1]}', '{"messages":[{"a":1},{"b":2}],"tools":[1],"messages":[]}'),
        ('{"model":"m","messages":[{"a":1},{"b":2}]}', '{"model":"m","messages":[{"a":1},{"b":2}],"model":"n"}'),
        ('{"messages":"x","messages":[{"a":1},{"b":2}]}', '{"messages":"x","messages":[{"a":1},{"b":3}]}'),
        (
            '{"input":[{"a":1},{"b":2}],"messages":[{"c":3}]}',
            '{"input":[{"a":1},{"b":2},{"d":4}],"messages":[{"c":3}]}',
        ),
        # Whitespace between values, before and after.
        ('{"messages":[{"a":1} , {"b":2}\n]\t}', '{"messages":[{"a":1} , {"b":2} ,{"c":3}\r\n]\t}  '),
        ('{"messages":[{"a":1},{"b":2}]}', '{"messages":[{"a":1},{"b":2}]} x'),
        ('{"messages":[{"a":1},{"b":2}]}', '{"messages":[{"a":1},{"b":2},]}'),
        ('{"messages":[{"a":1},{"b":2}]}', '{"messages":[{"a":1},{"b":2}],}'),
        ('{"messages":[{"a":1},{"b":2}]}', '{"messages":[{"a":1},{"b":2}]'),
        ('{"messages":[{"a":1},{"b":2}]}', '{"messages":[{"a":1},{"b":2}] , "k" : NaN , "l":-Infinity}'),
        # Literals at the cut.
        ('{"messages":[{"a":1},null,true]}', '{"messages":[{"a":1},null,true,false]}'),
        ('{"messages":[{"a":1},"s"]}', '{"messages":[{"a":1},"s","\\ud800\\udc00\\ud800"]}'),
        ('{"messages":[{"a":1},{"b":"\\u00e9"}]}', '{"messages":[{"a":1},{"b":"\\u00e9"},{"c":"\x01"}]}'),
    ],
)
def test_named_cases(kept_text: str, text: str) -> None:
    cache = kept(kept_text)
    # Read up to the first element ending in a digit (none kept when that is the first).
    assert not cache._bodies or cache._bodies[0].ends
    check(cache, text)


def test_random_edits_of_random_bodies() -> None:
    rng = random.Random(20261202)
    pieces = ['"a"', "1", "-0.5e3", "true", "null", "[]", "{}", '"\\n\\u00e9"', '{"k":[1,"x"]}']

    def element() -> str:
        return "{" + ",".join(f'"{rng.choice("abc")}":{rng.choice(pieces)}' for _ in range(rng.randint(0, 3))) + "}"

    for _ in range(300):
        key = rng.choice(["messages", "input"])
        head = rng.choice(["", '"model":"m",', '"model":"m","stream":true,'])
        elements = [element() for _ in range(rng.randint(1, 6))]
        tail = rng.choice(["", ',"tools":[{"a":1}]', ',"n":1,"tools":[]'])
        base = "{" + head + f'"{key}":[' + ",".join(elements) + "]" + tail + "}"
        cache = kept(base) if rng.random() < 0.5 else kept_unread(base)
        for _ in range(20):
            p = rng.randint(1, len(base))
            q = min(len(base), p + rng.randint(0, 4))
            check(cache, base[:p] + rng.choice(EDITS + [element() + ","]) + base[q:])
        grown = "{" + head + f'"{key}":[' + ",".join(elements + [element()]) + "]" + tail + "}"
        check(cache, grown)


def test_deep_nesting_gives_json_loads_error() -> None:
    base = '{"messages":[{"a":1},{"b":2}]}'
    deep = '{"messages":[{"a":1},' + "[" * (sys.getrecursionlimit() + 10) + "]" * (sys.getrecursionlimit() + 10) + "]}"
    check(kept(base), deep)


def test_parse_json_splices_big_bodies_and_equals_json_loads() -> None:
    """Through :func:`mockoss.jsonbody.parse_json`, bytes: UTF-8 with lone surrogates (which
    ``json.loads`` decodes with ``surrogatepass``), a UTF-16 body, a byte-order mark."""
    clear_caches()
    try:
        for turns in range(30, 50):
            raw = agent_body(turns).encode()
            assert len(raw) >= jsonbody.SPLICE_MIN
            assert same(jsonbody.parse_json(raw), json.loads(raw))
        assert jsonbody.SPLICE._bodies and jsonbody.SPLICE._bodies[0].ends  # kept, read
        raw = agent_body(50).encode()[:-1] + b',"x":"\xed\xa0\x80"}'
        assert same(jsonbody.parse_json(raw), json.loads(raw))
        for other in (agent_body(50).encode("utf-16-le"), b"\xef\xbb\xbf" + agent_body(50).encode()):
            assert same(jsonbody.parse_json(other), json.loads(other))
        with pytest.raises(json.JSONDecodeError):
            jsonbody.parse_json(agent_body(51).encode()[:-1])
    finally:
        clear_caches()
    assert len(jsonbody.SPLICE) == 0  # reset empties it


def test_bounded_in_bytes_and_count() -> None:
    cache = SpliceCache(200_000, 50_000)
    for turns in range(1, 60):
        text = agent_body(turns)
        cache.parse(text, lambda text=text: json.loads(text))
        assert cache.size <= 200_000
        assert len(cache) <= RECENT
    assert all(len(body.text) <= 50_000 for body in cache._bodies)
    cache.clear()
    assert len(cache) == 0 and cache.size == 0


# ---------------------------------------------------------------- the issue 9 breaker's findings (13th session)


def test_a_body_read_late_is_checked_from_its_start() -> None:
    """Finding 1: a body kept unread is compared up to half of the new text only; long
    instructions ending in a timestamp put that half inside them, and the first reuse returned
    the kept body's instructions."""
    cache = SpliceCache(1 << 24, 1 << 20)

    def body(now: str) -> str:
        return json.dumps(
            {"model": "m", "instructions": "Be terse. " * 1000 + now, "input": [{"role": "user", "content": "hi"}]}
        )

    for text in (body("Now: 23:00:01Z"), body("Now: 23:59:59Z"), body("Now: 23:59:59Z"), body("Now: 00:00:00Z")):
        assert same(cache.parse(text, lambda text=text: json.loads(text)), json.loads(text))


def test_a_value_near_the_recursion_limit_gets_a_fresh_servers_answer_after_a_kept_body() -> None:
    """Finding 2: read after a kept body, an element was scanned a few calls shallower than
    json.loads scans it on a fresh server, and a value within those levels of the limit was
    accepted where the fresh server refused it (987-992 levels through the server). Every depth
    near the limit through :func:`mockoss.jsonbody.parse_json`, after an empty cache and after
    one holding a body that shares the head (the breaker's reproducer)."""
    pad = '{"role":"system","content":"' + "s" * 9000 + '"}'

    def body(extra: str) -> bytes:
        return ('{"messages":[' + pad + ',{"role":"user","content":"hi"}' + extra + '],"model":"m"}').encode()

    def answer(raw: bytes, warm: bool) -> str:
        clear_caches()
        if warm:
            jsonbody.parse_json(body(""))
        try:
            jsonbody.parse_json(raw)
            return "value"
        except RecursionError:
            return "RecursionError"
        except ValueError:
            return "ValueError"

    try:
        limit = sys.getrecursionlimit()
        for depth in range(limit - 120, limit):
            raw = body("," + "[" * depth + "]" * depth)
            assert answer(raw, True) == answer(raw, False), depth
    finally:
        clear_caches()


def test_an_edited_long_last_element_is_not_read_every_time() -> None:
    """Finding 4: a big last message edited near its end every turn: the previous body, kept
    unread, was read element by element each time (13-23x a whole parse) and then not used."""
    cache = SpliceCache(1 << 24, 1 << 20)
    reads = []
    original = cache._read
    cache._read = lambda body, clears: reads.append(1) or original(body, clears)  # type: ignore[method-assign]
    # Ten tools: not sparse (SPARSE_ELEMENT_CHARS), so the body is kept.
    tools = [{"type": "function", "function": {"name": f"t{k}", "parameters": {"type": "object"}}} for k in range(10)]
    for n in range(20):
        text = json.dumps(
            {
                "model": "m",
                "messages": [{"role": "user", "content": "context " * 2000 + f"question {n}"}],
                "tools": tools,
            }
        )
        assert same(cache.parse(text, lambda text=text: json.loads(text)), json.loads(text))
    assert len(reads) <= 20 // (SKIP_AFTER_WASTED_READ + 1)  # was 19
    # A conversation that goes on (new messages after it) is spliced again within five turns.
    messages = [{"role": "user", "content": "context " * 2000 + "question 19"}]
    for n in range(SKIP_AFTER_WASTED_READ + 2):
        messages.append({"role": "assistant", "content": f"answer {n}"})
        text = json.dumps({"model": "m", "messages": messages, "tools": tools})
        assert same(cache.parse(text, lambda text=text: json.loads(text)), json.loads(text))
    assert cache._bodies[0].ends  # kept read: spliced


@pytest.mark.parametrize(
    "shape",
    [
        "agent",
        '{"messages":[' + ",".join(["{}"] * 30000) + "]}",
        '{"messages":[{"a":[' + ",".join(["[]"] * 30000) + "]}]}",
        '{"messages":[{"a":[' + ",".join(["1.5"] * 30000) + "]}]}",
        '{"messages":[{"a":[' + ",".join(str(10**6 + k) for k in range(30000)) + "]}]}",
        '{"messages":[{"a":"' + "é\U0001f600" * 30000 + '"}]}',
        '{"messages":[{"a":[' + ",".join(['"x"'] * 30000) + "]}]}",
        '{"messages":[{"a":[' + ",".join(f'"{k:x}"' for k in range(30000)) + "]}]}",
        '{"messages":[' + ",".join(f'{{"role":"user","content":"{k}","name":"n{k}"}}' for k in range(5000)) + "]}",
    ],
)
def test_a_kept_body_is_counted_at_no_less_than_its_memory(shape: str) -> None:
    """Finding 3: bytes counted for a kept body bound the memory its objects take."""
    import tracemalloc

    from mockoss.jsonsplice_read import object_bytes as _object_bytes

    text = agent_body(40) if shape == "agent" else shape
    tracemalloc.start()
    try:
        value = json.loads(text)
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert value and _object_bytes(text) >= used, (_object_bytes(text), used)


def test_a_body_mostly_tools_is_spliced_with_its_tools() -> None:
    """The review's finding 3: the text after the array, taken as kept when it is the same, counts
    toward the half a body must share: one short message and 100 tools, resent, is spliced
    (its tools the kept object), not read again every fifth request."""
    tools = [{"type": "function", "function": {"name": f"t{k}", "parameters": {"type": "object"}}} for k in range(100)]
    cache = SpliceCache(1 << 24, 1 << 20)
    values = []
    for n in range(8):
        text = json.dumps(
            {
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": f"q {n}"}],
                "tools": tools,
            }
        )
        values.append(cache.parse(text, lambda text=text: json.loads(text)))
        assert same(values[-1], json.loads(text))
    assert all(v["tools"] is values[-1]["tools"] for v in values[2:])


def test_a_parse_under_way_keeps_nothing_after_a_clear() -> None:
    """The review's finding 9: ``reset`` while another thread parses; the body that parse made
    is not put back into the emptied cache."""
    cache = SpliceCache(1 << 24, 1 << 20)
    text = agent_body(5)

    def whole() -> object:
        cache.clear()  # a reset, while this parse is under way
        return json.loads(text)

    cache.parse(text, whole)
    assert len(cache) == 0


# ---------------------------------------------------------------- the issue 9 breaker's findings (14th session)


def test_a_sparse_conversation_is_not_kept_and_parses_as_json_loads() -> None:
    """Finding 1: a coding agent's turns, mostly long tool outputs (here 20 KB each), parsed 9-14x
    slower spliced than whole; bodies averaging over SPARSE_ELEMENT_CHARS per element are not kept,
    so nothing is decoded or compared for them (the bytes path of :func:`jsonbody.parse_json`)."""
    from mockoss.jsonsplice import SPARSE_ELEMENT_CHARS

    clear_caches()
    try:
        messages: list[dict] = [{"role": "system", "content": "x" * 100}]
        kept = []
        for turn in range(12):
            messages.append(
                {"role": "tool", "tool_call_id": f"c{turn}", "content": f"{turn} " + "output line\n" * 1700}
            )
            raw = json.dumps({"model": "m", "messages": messages}).encode()
            assert same(jsonbody.parse_json(raw), json.loads(raw))
            kept.append(len(jsonbody.SPLICE))
        assert len(raw) > SPARSE_ELEMENT_CHARS * len(messages)
        assert kept[-1] == 0 and jsonbody.SPLICE.size == 0  # every turn is sparse: none kept
        # An agent turn of short messages is kept as before.
        raw = agent_body(40).encode()
        assert same(jsonbody.parse_json(raw), json.loads(raw))
        assert len(jsonbody.SPLICE) == 1
    finally:
        clear_caches()


@pytest.mark.parametrize("filler", ["0", '"a"', "{}", "[]", "true"])
def test_tiny_elements_are_not_read_one_by_one(filler: str) -> None:
    """Finding 4: 60,000 tiny elements after a long shared first element were read by this
    module's loop on every request (40-200 ms against 1-11 ms whole). Reading stops within the
    first stretch of CHECK_EVERY elements that averages under MIN_ELEMENT_CHARS characters, and
    the value is still json.loads'."""
    from mockoss import jsonsplice_read

    fillers = ",".join([filler] * 60_000)
    text = '{"messages":[{"role":"system","content":"' + "x" * 50_000 + '"},' + fillers + "]}"
    scanned = []
    real = jsonsplice_read._scan
    jsonsplice_read._scan = lambda s, i: scanned.append(i) or real(s, i)  # type: ignore[assignment]
    try:
        with pytest.raises(jsonsplice_read.Miss):
            jsonsplice_read.parse_whole(text)
    finally:
        jsonsplice_read._scan = real  # type: ignore[assignment]
    assert len(scanned) <= jsonsplice_read.CHECK_EVERY + 1
    cache = SpliceCache(1 << 24, 1 << 21)
    for t in range(3):
        edited = text.replace('"},', f'"}},{{"t":{t}}},', 1)
        assert same(cache.parse(edited, lambda edited=edited: json.loads(edited)), json.loads(edited))
    # Real messages, however short, are read: the shortest message object is 28 characters.
    short = '{"messages":[' + ",".join(['{"role":"user","content":""}'] * 2000) + "]}"
    value, body = jsonsplice_read.parse_whole(short)
    assert same(value, json.loads(short)) and body is not None and len(body.ends) == 2000


def test_a_spliced_body_counts_its_objects_from_its_new_text_at_no_less_than_whole() -> None:
    """Finding 1's fix: a spliced body counts only its new text (the kept body's counts for the
    rest), and the count still bounds the whole text's :func:`object_bytes` (finding 7: plus each
    kept element's slots, ELEMENT_BYTES)."""
    from mockoss.jsonsplice_read import ELEMENT_BYTES, object_bytes

    cache = SpliceCache(1 << 26, 1 << 21)
    for turns in range(1, 40):
        text = agent_body(turns)
        assert same(cache.parse(text, lambda text=text: json.loads(text)), json.loads(text))
    read = [body for body in cache._bodies if body.ends]
    assert read
    for body in read:
        least = sys.getsizeof(body.text) + object_bytes(body.text) + ELEMENT_BYTES * len(body.ends)
        assert body.size >= least, (body.size, least)
        assert list(body.counted) == sorted(body.counted) and len(body.counted) == len(body.ends)


def test_the_bytes_path_parses_edited_bodies_as_json_loads() -> None:
    """:func:`jsonbody.parse_json` hands bytes to the cache, which decodes them only when it has a
    kept body to compare with or a body to keep: every edit of a kept agent turn, as bytes."""
    rng = random.Random(7)
    clear_caches()
    try:
        base = agent_body(30)
        for _ in range(300):
            k = rng.randrange(len(base))
            text = (
                base[:k] + rng.choice(["", "x", '"', "\\", "]", "}", ",", " ", "é", "1"]) + base[k + rng.randrange(3) :]
            )
            raw = text.encode("utf-8", "surrogatepass")
            want = outcome(lambda raw=raw: json.loads(raw), text)
            got = outcome(lambda raw=raw: jsonbody.parse_json(raw), text)
            assert got[0] == want[0], text
            if got[0] == "value":
                assert same(got[1], want[1]), text
            jsonbody.parse_json(base.encode())  # the conversation goes on
    finally:
        clear_caches()


def test_one_long_element_per_stretch_does_not_lift_the_tiny_element_cutoff() -> None:
    """The second breaker's M3 (14th session): one 5,400-character message in each stretch of 255
    ``{}`` lifted the stretch's average over MIN_ELEMENT_CHARS, and the loop read all 20,480
    elements (19 ms against 0.9 ms whole); each element now weighs at most ELEMENT_CHARS_CAP."""
    from mockoss import jsonsplice_read

    stretch = ['{"role":"user","content":"' + "y" * 5400 + '"}'] + ["{}"] * 255
    text = '{"messages":[' + ",".join(stretch * 80) + "]}"
    scanned = []
    real = jsonsplice_read._scan
    jsonsplice_read._scan = lambda s, i: scanned.append(i) or real(s, i)  # type: ignore[assignment]
    try:
        with pytest.raises(jsonsplice_read.Miss):
            jsonsplice_read.parse_whole(text)
    finally:
        jsonsplice_read._scan = real  # type: ignore[assignment]
    assert len(scanned) <= jsonsplice_read.CHECK_EVERY + 1
    cache = SpliceCache(1 << 26, 1 << 23)
    for k in range(3):
        edited = text[:-2] + f',{{"k":{k}}}]}}'
        assert same(cache.parse(edited, lambda edited=edited: json.loads(edited)), json.loads(edited))
