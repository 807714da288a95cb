"""The request mutations of ``bench_fuzz.py``: mutated bodies, junk headers and control-route cases.

Every function takes a :class:`random.Random` and draws from it only, as :mod:`fuzz_cases` (whose
valid-looking bodies :func:`http_case` mutates), so a case is a function of its seed string. The
``http`` part sends these cases to ``mockoss serve``, the ``requests`` part answers them in process.
"""

from __future__ import annotations

import json
import random
from typing import Any

from fuzz_cases import random_completion, random_request

#: Raw JSON a placeholder string stands for: numbers Python's json cannot write, deep nesting.
RAW_VALUES = {
    "1e400": b"1e400",
    "-1e400": b"-1e400",
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "1e-400": b"1e-400",
    "big": b"1" * 400,
    "deep-list": b"[" * 5000 + b"]" * 5000,
    "deep-object": b'{"a":' * 3000 + b"1" + b"}" * 3000,
    "deep-messages": b'[{"role":"user","content":' * 500 + b'"x"' + b"}]" * 500,
}
HTTP_PROFILES = [
    "vllm",
    "ollama",
    "llamacpp",
    "lmstudio",
    "openai",
    "sglang",
    "trtllm",
    "vllm-mlx",
    "mlx-lm",
    "gptoss-reference",
    "vllm-2025",
    "vllm-0.10.1",
]
QUICK_HTTP_PROFILES = ["vllm", "ollama", "llamacpp", "lmstudio"]
PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "completions": "/v1/completions",
    "ollama.chat": "/api/chat",
    "ollama.generate": "/api/generate",
    "lmstudio.chat": "/api/v0/chat/completions",
    "lmstudio.completions": "/api/v0/completions",
}
CONTENT_TYPES_HTTP = [
    "application/json",
    "application/json",
    "application/json",
    "text/plain",
    "",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin-1",
]
JUNK_HEADERS = {
    "x-mockoss-switch": [
        "strict=!!python/object/apply:os.system ['true']",
        "strict=[[[[[[",
        "strict=*a",
        "strict=&a [*a, *a]",
        "a",
        "=",
        "strict=" + "x" * 5000,
        "harmony_error_status=999",
        "strict=true," * 2000,
        "nope=1",
        "reasoning_field=reasoning_content",
        "strict={a: b}",
        "strict=\t",
        "strict=é",
        "strict=!!binary AAAA",
    ],
    "x-mockoss-transport": [
        "ttft_ms=-1",
        "tokens_per_s=nan",
        "tokens_per_s=1e-300",
        "ttft_ms=5",
        "frames_per_write=0",
        "split_special=true",
        "jitter=2",
        "x=1",
        "ttft_ms=1e400",
        "truncate_after_frames=-1",
        "malformed_at_frame=1",
    ],
    "x-mockoss-scenario": [
        "../../etc/passwd",
        "a" * 300,
        "clean-answer",
        "nonexistent",
        "/etc/hosts",
        "%00",
        "clean-tool-call",
        ".env",
    ],
    "x-mockoss-session": ["auto", "x" * 5000, "é", "", "s1"],
    "x-mockoss-test-id": ["t1", "x" * 300, "../x", "é"],
}


def _junk(rng: random.Random) -> Any:
    choice = rng.randrange(24)
    if choice < 8:
        return "\x00RAW:" + rng.choice(sorted(RAW_VALUES)) + "\x00"
    return [
        None,
        True,
        False,
        0,
        -1,
        2**63,
        -(2**63) - 1,
        10**30,
        1.5,
        -0.0,
        "",
        "x",
        "\ud800",
        "a\udfffb",
        "w" * (60_000 if rng.random() < 0.05 else rng.choice([300, 10_000])),
        [],
        [1, "a", None],
        {},
        {"a": {"b": []}},
        [[0] * 50],
        [999_999_999, -1],
        {"role": "user"},
    ][choice - 8]


def _containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if isinstance(value, (dict, list)) else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _containers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _containers(item, (*path, index))
    return found


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def dump(body: Any) -> bytes:
    """``body`` as JSON bytes, each placeholder of :data:`RAW_VALUES` replaced by its raw text."""
    raw = json.dumps(body).encode()
    for name, text in RAW_VALUES.items():
        raw = raw.replace(json.dumps("\x00RAW:" + name + "\x00").encode(), text)
    return raw


def mutate(rng: random.Random, body: dict[str, Any]) -> bytes:
    """``body`` with 1-3 tree mutations, written as JSON, then maybe a byte-level one.

    A list grown by repeating one of its items is grown last, and once: the copies are one object,
    so growing one of them again would multiply the tree (a run once grew a body to 24 GB).
    """
    grow: tuple[list[Any], int] | None = None
    for _ in range(rng.randint(1, 3)):
        node = _at(body, rng.choice(_containers(body)))
        op = rng.randrange(4)
        if isinstance(node, dict):
            keys = list(node)
            if op == 0 and keys:
                del node[rng.choice(keys)]
            elif op == 1 or not keys:
                node[
                    rng.choice(
                        [
                            "extra",
                            "n",
                            "seed",
                            "logprobs",
                            "top_logprobs",
                            "metadata",
                            "user",
                            "suffix",
                            "previous_response_id",
                            "response_format",
                            "stop",
                            "logit_bias",
                            "prompt",
                        ]
                    )
                ] = _junk(rng)
            else:
                node[rng.choice(keys)] = _junk(rng)
        elif node:
            if op == 0:
                node.pop(rng.randrange(len(node)))
            elif op == 1:
                grow = grow or (node, rng.choice([1, 10, 2000]))
            else:
                node[rng.randrange(len(node))] = _junk(rng)
        else:
            node.append(_junk(rng))
    if grow is not None and grow[0]:
        node, times = grow
        item = rng.choice(node)
        times = min(times, 1 + 40_000_000 // len(json.dumps(item)))  # a body of at most ~40 MB
        node.extend([item] * times)
    raw = dump(body)
    cut = rng.random()
    if cut < 0.06:
        raw = raw[: rng.randrange(len(raw) + 1)]
    elif cut < 0.10:
        at = rng.randrange(len(raw) + 1)
        raw = raw[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf"]) + raw[at:]
    elif cut < 0.12:
        raw = rng.choice([b"", b"null", b"[]", b'"x"', b"1e400", b"{", b'{"model":1,"model":2}', b"\xef\xbb\xbf{}"])
    return raw


def control_case(rng: random.Random) -> tuple[str, str, bytes, dict[str, str]]:
    """A request to a ``/mockoss`` control route with junk: a mutated scenario for a session of its
    own (as JSON or YAML text), or junk query parameters."""
    test_id = rng.choice(["fz-ctl", "c" * 300, "%00", "%C3%A9", "%ED%A0%80"])  # none a generation case sends
    if rng.random() < 0.6:
        data: dict[str, Any] = {"version": 1, "steps": [{"completion": random_completion(rng)}]}
        if rng.random() < 0.3:
            data = {"version": 1, "rules": [{"match": {"last_user": rng.choice(["^(a+)+$", "(?P<x", "\\p{L}", "(a)\\1"]),
                                                       "turn": rng.choice([1, [1, 2], {"min": 2}, "x"])},
                                             "steps": data["steps"]}]}  # fmt: skip
        raw = (
            mutate(rng, data)
            if rng.random() < 0.7
            else rng.choice([b"a: &a [*a, *a]", b"!!python/object:os.system x", b"- [", b"\xff"])
        )
        return (
            "POST",
            f"/mockoss/scenario?name={rng.choice(['fz', '../x', ''])}&test_id={test_id}",
            raw,
            {"Content-Type": "application/yaml"},
        )
    method, path = rng.choice([("GET", "/mockoss/requests"), ("POST", "/mockoss/reset"), ("GET", "/mockoss/sessions"),
                               ("DELETE", f"/mockoss/sessions/{test_id}"), ("GET", "/mockoss/metrics"), ("GET", "/v1/models")])  # fmt: skip
    query = rng.choice(["", f"?test_id={test_id}", f"?session={'s' * 200}", "?all=maybe", "?test_id=&session=%ff"])
    return method, path + query, b"", {}


def http_case(
    rng: random.Random, profile: str, endpoints: list[str], model: str
) -> tuple[str, str, bytes, dict[str, str]]:
    """One mutated request: method, path, body, headers (1 in 25 to a control route)."""
    if rng.random() < 0.04:
        return control_case(rng)
    endpoint = rng.choice(endpoints)
    body = random_request(rng, endpoint, rng.choice([model, model, "\ud800", "other-model", ""]), rng.random() < 0.5)
    if endpoint == "responses" and rng.random() < 0.3:
        body.update(instructions=rng.choice(["\ud800", "ok"]), metadata={"k": rng.choice(["\udc00", "v"])})
    if endpoint in ("completions", "lmstudio.completions") and rng.random() < 0.2:
        body.update(prompt=rng.choice([[1, 2, 300_000], [200_005], [[1], [2]], []]), echo=True)
    if endpoint == "ollama.generate" and rng.random() < 0.03:
        body["prompt"] = "w" * 1_000_000
    raw = mutate(rng, body) if rng.random() < 0.9 else dump(body)
    headers = {"Content-Type": rng.choice(CONTENT_TYPES_HTTP)}
    for name, values in JUNK_HEADERS.items():
        if rng.random() < 0.08:
            headers[name] = rng.choice(values)
    path = PATHS[endpoint]
    if rng.random() < 0.05:
        path = rng.choice(
            ["/s/fz/v1" + path.removeprefix("/v1"), "/s/%2e%2e/v1/chat/completions", path + "/", path + "?x=1"]
        )
    return "POST", path, raw, headers


#: The scenario the served profiles of the http part answer with: two steps (a call, an answer).
HTTP_SCENARIO = "clean-tool-call"
_ENDPOINT_OF = {path: endpoint for endpoint, path in PATHS.items()}


def endpoint_of(path: str) -> str | None:
    """The endpoint an http case's ``path`` names (its query, a trailing slash and the session
    prefix ``/s/fz`` aside), else ``None`` (a control route, an unknown path)."""
    return _ENDPOINT_OF.get(path.split("?")[0].rstrip("/").removeprefix("/s/fz"))


def json_or_none(raw: bytes) -> Any:
    """A case's body parsed as JSON, or ``None`` where it is not JSON (or nested past the parser)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None
