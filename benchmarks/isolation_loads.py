"""The loads of ``bench_isolation.py``: the mockoss scenario its cases match, and each heavy request.

:func:`cases` builds every heavy request by case name (what each one reproduces, and its figures:
``bench_isolation.py``'s docstring); :data:`PROFILES` names the cases a mockoss server of another
profile answers. No sockets here: :mod:`isolation_measure` sends them.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "openai/gpt-oss-20b"
SCENARIO = """\
version: 1
rules:
  - name: pathological
    match: {last_user: "^(a+)+$"}
    steps: [{completion: {messages: [{channel: final, content: "all a"}]}}]
    when_exhausted: repeat_last
  - name: tool
    match: {last_user: "^look it up"}
    steps:
      - completion:
          messages:
            - {channel: commentary, recipient: functions.lookup, content_type: <|constrain|>json, content: '{"location": 1}'}
            - {channel: commentary, recipient: functions.lookup, content_type: <|constrain|>json, content: '{"location": 2}'}
    when_exhausted: repeat_last
  - name: echo
    match: {last_user: "^echo me"}
    steps: [{completion: {messages: [{channel: final, content: "You said: {{ request.messages[-1].content }}"}]}}]
    when_exhausted: repeat_last
  - name: long
    match: {last_user: "^long answer"}
    steps: [{completion: {messages: [{channel: analysis, content: "think"}, {channel: final, content: "LONG_ANSWER"}]}}]
    when_exhausted: repeat_last
  - name: very long
    match: {last_user: "^very long answer"}
    steps: [{completion: {messages: [{channel: analysis, content: "think"}, {channel: final, content: "VERY_LONG_ANSWER"}]}}]
    when_exhausted: repeat_last
  - steps: [{completion: {messages: [{channel: analysis, content: "Say hi."}, {channel: final, content: "Hi!"}]}}]
    when_exhausted: repeat_last
""".replace("VERY_LONG_ANSWER", " ".join(f"w{i}" for i in range(40_000))).replace(
    "LONG_ANSWER", " ".join(f"w{i}" for i in range(3000))
)


def _body(messages: list[dict[str, str]]) -> bytes:
    return json.dumps({"model": MODEL, "messages": messages}, separators=(",", ":")).encode()


def _body_of(messages: list[dict[str, Any]]) -> bytes:
    """A chat body with ``json.dumps``'s default separators (spaces after ``:`` and ``,``)."""
    return json.dumps({"model": MODEL, "messages": messages}).encode()


Heavy = bytes | int | tuple[str, bytes | None]


def _crafted_tool_body() -> bytes:
    """A 3 KB chat body declaring ``lookup`` with a crafted ``parameters`` schema: 40 levels of
    ``anyOf`` over two ``$ref`` to the next level, a string at the bottom. Against the scripted
    ``{"location": 1}`` every one of the 2**40 paths fails, so only mockoss's CPU budget ends the
    tool check (in process: ~0.5-0.65 s per call before the per-request budget, for each of the
    step's two calls)."""
    defs: dict[str, Any] = {
        f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(40)
    }
    defs["a40"] = {"type": "string"}
    return _tool_body({"type": "object", "properties": {"location": {"$ref": "#/$defs/a0"}}, "$defs": defs})


def _tool_body(parameters: dict[str, Any], others: int = 0, names: list[str] | None = None) -> bytes:
    """A chat body for the ``tool`` rule declaring ``lookup`` with ``parameters`` (after ``others``
    plain tools, or plain tools of these ``names``)."""
    plain = {"type": "object", "properties": {"q": {"type": "string"}}}
    names = names if names is not None else [f"tool_{i}" for i in range(others)]
    tools = [
        {"type": "function", "function": {"name": name, "description": "d", "parameters": plain}} for name in names
    ]
    tools.append({"type": "function", "function": {"name": "lookup", "parameters": parameters}})
    body = {"model": MODEL, "messages": [{"role": "user", "content": "look it up"}], "tools": tools}
    return json.dumps(body, separators=(",", ":")).encode()


def cases() -> dict[str, Heavy]:
    """Heavy requests by case name: a chat body; an int (only a ``Content-Length`` that large is
    announced); ``(path, body)`` (``body`` ``None``: a ``GET``)."""

    def completions(prompts: list[str]) -> tuple[str, bytes]:
        return "/v1/completions", json.dumps({"model": MODEL, "prompt": prompts, "stream": True}).encode()

    def turns(n: int) -> list[dict[str, str]]:
        return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]

    words = " ".join(f"w{i}" for i in range(36_000))  # ~230 KB of short words

    return {
        "10MB": _body([{"role": "user", "content": "new words every time " * 500_000}]),
        "many": _body([{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(20_000)]),
        "many100k": _body(
            [{"role": "user" if i % 2 == 0 else "assistant", "content": f"t{i}"} for i in range(100_000)]
        ),
        "regex": _body([{"role": "user", "content": "a" * 26 + "b"}]),
        "100MB": 100 * 1024 * 1024,
        "batch": completions(["hi"] * 40_000),
        "batch6k": completions([f"prompt {i} of a batch" for i in range(6_000)]),
        "echo": _body([{"role": "user", "content": "echo me " + ("hello world, this is text. " * 185186)[:5_000_000]}]),
        "echo8k": _body([{"role": "user", "content": "echo me " + ("hello world, this is text. " * 400)[:7_900]}]),
        "log": ("/mockoss/requests", None),
        "schema": _crafted_tool_body(),
        "tools100k": _tool_body({"type": "object"}, 100_000),
        "longword": (
            "/v1/completions",
            json.dumps({"model": MODEL, "prompt": "a" * 50_000, "echo": True, "max_tokens": 3}).encode(),
        ),
        "tokenize": ("/tokenize", json.dumps({"model": MODEL, "prompt": "a" * 50_000}).encode()),
        "ollamaword": ("/api/generate", json.dumps({"model": MODEL, "prompt": "a" * 50_000, "stream": False}).encode()),
        "ollama10MB": (
            "/api/generate",
            json.dumps({"model": MODEL, "prompt": "new words every time " * 500_000, "stream": False}).encode(),
        ),
        "gword": ("/v1/responses", json.dumps({"model": MODEL, "input": "a" * 70_000}).encode()),
        "gitems": (
            "/v1/responses",
            json.dumps({"model": MODEL, "input": [{"role": "user", "content": "x"}] * 1_000}).encode(),
        ),
        "spacerun": ("/v1/responses", json.dumps({"model": MODEL, "input": " \n" * 87_000}).encode()),
        "nbsp": json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": "\u00a0 " * 40_000}]}, ensure_ascii=False
        ).encode(),
        "longnames": _tool_body({"type": "object"}, 0, names=[f"t{i} " + "y" * 3_900 for i in range(60)]),
        "tokmsgs": ("/tokenize", json.dumps({"model": MODEL, "messages": turns(7_000)}).encode()),
        "tokstrs": ("/tokenize", json.dumps({"model": MODEL, "prompt": words, "return_token_strs": True}).encode()),
        "template": ("/apply-template", json.dumps({"messages": turns(7_000)}).encode()),
        "pieces": ("/tokenize", json.dumps({"content": words, "with_pieces": True}).encode()),
        "parts": _body_of(
            [
                {
                    "role": "system",
                    "content": [
                        {"type": "text", "text": ("y" if i == 0 else "x") * (80 + i % 7), "j": " a"}
                        for i in range(2000)
                    ],
                },
                {"role": "user", "content": "hi"},
            ]
        ),
        "long40k": _body([{"role": "user", "content": "very long answer"}]),
        "long40ks": json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": "very long answer"}], "stream": True}
        ).encode(),
        "long40kcut": json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": "very long answer"}], "max_tokens": 39_000}
        ).encode(),
        "trtlong": ("/v1/responses", json.dumps({"model": MODEL, "input": "long answer", "stream": True}).encode()),
        "trtlong2": ("/v1/responses", json.dumps({"model": MODEL, "input": "long answer", "stream": True}).encode()),
        "trtbatch": (
            "/v1/completions",
            json.dumps(
                {
                    "model": MODEL,
                    "prompt": [f"long answer {i}" for i in range(127)],
                    "max_tokens": 5000,
                    "stream": True,
                    "stream_options": {"include_usage": True, "continuous_usage_stats": True},
                }
            ).encode(),
        ),
    }


#: Cases answered by a mockoss server with another profile than the default (vLLM), by case name:
#: that profile (started with ``--served-model-name`` :data:`MODEL`, so the probe's body is the same).
PROFILES = {
    "ollamaword": "ollama",
    "ollama10MB": "ollama",
    "template": "llamacpp",
    "pieces": "llamacpp",
    "trtbatch": "trtllm",
    "trtlong": "trtllm",
    "trtlong2": "trtllm",
    "gword": "gptoss-reference",
    "gitems": "gptoss-reference",
}
