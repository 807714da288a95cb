"""The random cases of ``bench_fuzz.py``: scripted completions and valid-looking request bodies.

Every function takes a :class:`random.Random` and draws from it only, so a case is a function of
its seed string (``bench_fuzz.py`` seeds one per case: ``f"{seed}/{part}/{index}"``). The
mutations of these bodies (junk values, bytes, headers, control routes) are :mod:`fuzz_mutations`.
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
    """An ``X-Mockoss-Switch`` header naming one of the profile's ``switches`` (its spec dicts, from
    ``describe_profiles``) with a random value, in 3 of 10 draws; else no header."""
    if not switches or rng.random() < 0.7:
        return {}
    spec = rng.choice(switches)
    value = rng.choice(spec["choices"]) if spec.get("choices") else rng.choice([spec.get("default"), 1, 2, 16, 4096])
    text = json.dumps(value) if not isinstance(value, str) else value
    return {"x-mockoss-switch": f"{spec['name']}={text}"}
