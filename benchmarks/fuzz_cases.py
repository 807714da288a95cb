"""The random cases of ``bench_fuzz.py``: scripted completions, request bodies, and mutations.

Every function takes a :class:`random.Random` and draws from it only, so a case is a function of
its seed string (``bench_fuzz.py`` seeds one per case: ``f"{seed}/{part}/{index}"``).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

TEXT = [
    "hi",
    " there.",
    " Paris",
    "é",
    "🌧️",
    "👩‍👩‍👧",
    " 雨が降る",
    "中文",
    "\n",
    " ",
    "{",
    "}",
    '"',
    "\\",
    "```",
    'to=functions.bash {"command":["ls"]}',
    "<|channel|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|start|>",
    "<|constrain|>",
    "assistant",
    "analysis",
    "final",
    "commentary",
    " to=functions.x",
    "json",
    "\ud800",
    "\udfff",
    "\x00",
    "\u202e",
    "\ufeff",
    "{{ request.model }}",
    "{{ faker.city }}",
    "{{",
    "}}",
    '{"location": "San Francisco"}',
    '{"command": ["ls", "-la"]}',
    "null",
    "[1, 2]",
    "<|endoftext|>",
    "<|refusal|>",
]
RAW = [
    "<|channel|>",
    "analysis",
    "final",
    "commentary",
    "comment",
    " to=functions.get_weather",
    " to=functions.bash",
    " to=functions.x",
    " to=browser.search",
    " to=python",
    " to=foo",
    " to=container.exec",
    "<|message|>",
    "<|end|>",
    "<|start|>",
    "assistant",
    "<|constrain|>",
    "json",
    " code",
    '{"city":"Paris"}',
    '{"command":["ls"]}',
    " hi",
    " there.",
    "\n",
    " ",
    "é",
    "🌧️",
    " 雨が降る",
    "<|call|>",
    "<|return|>",
    "Done",
    'to=functions.bash {"command":["ls"]}',
    "<|endoftext|>",
    "<|startoftext|>",
    "<|reserved_200000|>",
    "\ud83d",
    "{{ request.model }}",
]
CHANNELS = ["analysis", "commentary", "final", "final", None, "comment", "analysis commentary", ""]
RECIPIENTS = [
    None,
    None,
    None,
    "functions.get_weather",
    "functions.bash",
    "functions.x",
    "browser.search",
    "python",
    "tool.mcp",
    "functions.",
    "assistant",
    "functions.get_weather<|channel|>commentary",
    "容器.exec",
]
CONTENT_TYPES = [None, None, "<|constrain|>json", "json", "code", "<|constrain|> json", "<|constrain|>"]
TOOLS = {
    "get_weather": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    "bash": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}},
    "x": {"type": "object"},
}


def _text(rng: random.Random, pieces: list[str], most: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(1, most)))


def random_completion(rng: random.Random) -> dict[str, Any]:
    """A scenario step's ``completion``: messages (maybe with a fault) or raw text."""
    from mockoss.harmony.faults import FAULTS

    if rng.random() < 0.3:
        return {"raw": _text(rng, RAW, 24)}
    messages = []
    for _ in range(rng.randint(1, 4)):
        message: dict[str, Any] = {"content": _text(rng, TEXT, 8) if rng.random() < 0.7 else _text(rng, TEXT[:15], 40)}
        for key, choices in (("channel", CHANNELS), ("recipient", RECIPIENTS), ("content_type", CONTENT_TYPES)):
            value = rng.choice(choices)
            if value is not None:
                message[key] = value
        messages.append(message)
    completion: dict[str, Any] = {"messages": messages}
    if rng.random() < 0.5:
        kind = FAULTS[rng.choice(sorted(FAULTS))]
        fault: dict[str, Any] = {"kind": kind.name}
        for param in kind.params:
            if rng.random() < 0.5:
                continue
            if param.choices:
                fault[param.name] = rng.choice(param.choices)
            elif param.type is int:
                fault[param.name] = rng.choice([None, -2, -1, 0, 1, 2, 3, 50]) if param.nullable else rng.randint(-1, 6)
            else:
                fault[param.name] = (
                    rng.choice([None, "", "functions.y", "<|end|>", "x y", "🌧️"])
                    if param.nullable
                    else _text(rng, TEXT, 3)
                )
        completion["fault"] = fault
    return completion


def random_request(rng: random.Random, endpoint: str, model: str, stream: bool) -> dict[str, Any]:
    """A valid-looking request body for ``endpoint`` with random tools, limits and options."""
    names = rng.sample(sorted(TOOLS), rng.randint(0, 3)) if rng.random() < 0.6 else []
    user = _text(rng, TEXT[:15], 6)
    body: dict[str, Any] = {"model": model, "stream": stream}
    limit = rng.choice([None, None, None, 1, 2, 5, 17, 64])
    if endpoint in ("chat", "lmstudio.chat", "ollama.chat"):
        body["messages"] = [{"role": "user", "content": user}]
        if rng.random() < 0.3:
            body["messages"] = [
                {"role": "system", "content": "Be brief."},
                *body["messages"],
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "again"},
            ]
        if names:
            body["tools"] = [
                {"type": "function", "function": {"name": n, "parameters": copy.deepcopy(TOOLS[n])}} for n in names
            ]
            body["tool_choice"] = rng.choice(
                ["auto", "auto", "none", "required", {"type": "function", "function": {"name": names[0]}}]
            )
        if endpoint == "ollama.chat":
            body.pop("tool_choice", None)
            if limit:
                body["options"] = {"num_predict": limit}
            if rng.random() < 0.3:
                body["think"] = rng.choice([True, False, "high"])
        elif limit:
            body[rng.choice(["max_tokens", "max_completion_tokens"])] = limit
        if stream and endpoint != "ollama.chat" and rng.random() < 0.5:
            body["stream_options"] = {"include_usage": rng.random() < 0.8}
    elif endpoint == "responses":
        body["input"] = user if rng.random() < 0.5 else [{"role": "user", "content": user}]
        if names:
            body["tools"] = [{"type": "function", "name": n, "parameters": copy.deepcopy(TOOLS[n])} for n in names]
            body["tool_choice"] = rng.choice(["auto", "auto", "none", "required"])
        if limit:
            body["max_output_tokens"] = limit + 15
        if rng.random() < 0.3:
            body["instructions"] = "Be brief."
        if rng.random() < 0.2:
            body["reasoning"] = {"effort": rng.choice(["low", "medium", "high"])}
    else:  # completions, lmstudio.completions, ollama.generate
        body["prompt"] = user
        if endpoint == "ollama.generate":
            if limit:
                body["options"] = {"num_predict": limit}
            if rng.random() < 0.2:
                body["raw"] = True
        else:
            if limit:
                body["max_tokens"] = limit
            if rng.random() < 0.15:
                body["echo"] = True
            if rng.random() < 0.15:
                body["logprobs"] = rng.choice([0, 1, 3])
            if stream and rng.random() < 0.5:
                body["stream_options"] = {"include_usage": True}
    if rng.random() < 0.25:  # an earlier turn: a tool call and its result
        _history(rng, endpoint, body)
    for _ in range(rng.choice([0, 0, 1, 2, 3])):  # valid options some server reads
        body.update(copy.deepcopy(rng.choice(OPTIONS[_family(endpoint)])))
    return body


def _family(endpoint: str) -> str:
    return {
        "lmstudio.chat": "chat",
        "lmstudio.completions": "completions",
        "ollama.chat": "ollama",
        "ollama.generate": "ollama",
    }.get(endpoint, endpoint)


#: Options the servers accept (some emulated, some refused with a 400 that says so), per family.
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "chat": [
        {"logprobs": True, "top_logprobs": 3},
        {"logprobs": True},
        {"stop": ["Paris", "\n"]},
        {"stop": "."},
        {"n": 1},
        {"n": 2},
        {"seed": 7},
        {"temperature": 0},
        {"response_format": {"type": "json_object"}},
        {"parallel_tool_calls": False},
        {"reasoning_effort": "low"},
        {"include_reasoning": False},
        {"skip_special_tokens": False},
        {"return_token_ids": True},
        {"echo": True},
        {"max_tokens": 0},
        {"continue_final_message": True, "add_generation_prompt": False},
        {"min_tokens": 3},
        {"ignore_eos": True},
        {"stream_options": {"include_usage": True, "continuous_usage_stats": True}},
        {"stream_interval": 3},
        {"tool_choice": {"type": "function", "function": {"name": "undeclared"}}},
        {"user": "u"},
        {"stop_token_ids": [200002]},
    ],
    "responses": [
        {"previous_response_id": "resp_0123456789abcdef"},
        {"store": False},
        {"include": ["reasoning.encrypted_content"]},
        {"truncation": "auto"},
        {"parallel_tool_calls": False},
        {"text": {"format": {"type": "json_object"}}},
        {"background": False},
        {"max_tool_calls": 1},
        {"metadata": {"a": "b"}},
        {"top_logprobs": 2},
        {"temperature": 0},
        {"tool_choice": {"type": "function", "name": "get_weather"}},
        {"max_output_tokens": 1},
        {"reasoning": {"effort": "low", "summary": "auto"}},
        {"stream": True, "stream_options": {"include_obfuscation": False}},
    ],
    "completions": [
        {"logprobs": 2},
        {"echo": True, "logprobs": 1},
        {"stop": ["."]},
        {"suffix": "x"},
        {"best_of": 1},
        {"skip_special_tokens": False},
        {"return_token_ids": True},
        {"prompt": ["a", "b", "c"]},
        {"prompt": [1, 2, 3]},
        {"prompt": [[1, 2], [3]]},
        {"max_tokens": 0},
        {"n": 2},
        {"seed": 3},
    ],
    "ollama": [
        {"format": "json"},
        {"format": {"type": "object"}},
        {"keep_alive": 0},
        {"think": "low"},
        {"options": {"stop": ["."], "temperature": 0, "num_ctx": 100}},
        {"system": "x"},
        {"template": "{{ .Prompt }}"},
        {"context": [1, 2, 3]},
        {"images": []},
        {"suffix": "x"},
        {"raw": True},
        {"options": {"num_predict": -1}},
    ],
}


def _history(rng: random.Random, endpoint: str, body: dict[str, Any]) -> None:
    """Prepend an earlier turn to ``body``: the model's call to ``get_weather`` and its result."""
    args = rng.choice(['{"location": "Paris"}', "not json", "", '{"location": "\ud800"}'])
    if "messages" in body:
        call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": args}}
        if endpoint == "ollama.chat":
            call = {"function": {"name": "get_weather", "arguments": {"location": "Paris"}}}
        body["messages"] = [
            *body["messages"],
            {"role": "assistant", "content": rng.choice([None, "", "ok"]), "reasoning": "think", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": rng.choice(["22 C", "", "error: 😱"])},
        ]
    elif endpoint == "responses":
        user = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        body["input"] = [
            *user,
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "think"}],
            },
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": args},
            {"type": "function_call_output", "call_id": rng.choice(["call_1", "call_2"]), "output": "22 C"},
        ]


def switch_header(rng: random.Random, switches: list[dict[str, Any]]) -> dict[str, str]:
    if not switches or rng.random() < 0.7:
        return {}
    spec = rng.choice(switches)
    value = rng.choice(spec["choices"]) if spec.get("choices") else rng.choice([spec.get("default"), 1, 2, 16, 4096])
    text = json.dumps(value) if not isinstance(value, str) else value
    return {"x-mockoss-switch": f"{spec['name']}={text}"}


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
