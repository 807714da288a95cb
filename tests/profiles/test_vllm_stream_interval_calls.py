"""``--stream-interval`` chunks that span several tool calls, as vLLM 0.32/0.33 stream them.

``HarmonyParser.parse_delta`` (vllm-project/vllm@v0.33.0:vllm/parser/harmony.py, the same at
v0.32.0) turns one engine step (several tokens) into one ``DeltaMessage``: a call whose first
token is in the chunk opens a ``tool_calls`` entry with id, name and the arguments seen so far,
later argument tokens are appended to the last entry, and the arguments of a call begun in an
earlier chunk open an entry with only its index. Content from several messages is joined.
"""

from __future__ import annotations

import json
from typing import Any

from mockoss.harmony.encoding import load_encoding
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
PARAMETERS = {"type": "object", "properties": {}}


def deltas(text: str, tools: list[str], interval: int) -> list[dict[str, Any]]:
    scenario = scenario_from_data({"steps": [{"completion": {"raw": text}}]}, name="interval", default_version=True)
    mock = MockServer(scenario=scenario, profile="vllm", switches={"stream_interval": interval}, served_model_names=[MODEL])
    body = {
        "model": MODEL,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": n, "parameters": PARAMETERS}} for n in tools],
    }
    reply = mock.handle("chat", json.dumps(body).encode(), {})
    assert reply.status == 200, reply.body
    out = []
    for frame in reply.frames:
        data = frame.decode().split("data: ", 1)[1].strip()
        if data == "[DONE]":
            continue
        choices = json.loads(data)["choices"]
        if choices and (delta := {k: v for k, v in choices[0]["delta"].items() if v is not None}):
            out.append(delta)
    return out


def test_a_chunk_spanning_three_calls_is_one_delta_with_one_entry_per_call() -> None:
    first = (
        "<|channel|>analysis<|message|>" + "think " * 60 + "<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.tool_a<|message|>"
    )
    rest = (
        '{"a": 1}<|end|><|start|>assistant<|channel|>final<|message|>One.<|end|>'
        '<|start|>assistant<|channel|>commentary to=functions.tool_b<|message|>{"b": 2}<|end|>'
        "<|start|>assistant<|channel|>final<|message|> Two.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.tool_c<|message|>{"c": 3}<|call|>'
    )
    count = len(load_encoding().encode(first, allowed_special="all"))
    assert len(load_encoding().encode(rest, allowed_special="all")) <= count - 1  # token 0, then `first`, then `rest`
    last = deltas(first + rest, ["tool_a", "tool_b", "tool_c"], interval=count - 1)[-1]
    assert last["content"] == "One. Two."
    entries = last["tool_calls"]
    assert entries[0] == {"index": 0, "function": {"arguments": '{"a": 1}'}}  # tool_a began a chunk earlier
    assert [(e["index"], e["function"]) for e in entries[1:]] == [
        (1, {"name": "tool_b", "arguments": '{"b": 2}'}),
        (2, {"name": "tool_c", "arguments": '{"c": 3}'}),
    ]
    ids = [e["id"] for e in entries[1:]]
    assert all(i.startswith("chatcmpl-tool-") for i in ids) and len(set(ids)) == 2


def test_a_call_wholly_inside_one_chunk_is_one_entry_with_its_name_and_arguments() -> None:
    text = (
        "<|channel|>analysis<|message|>Plan.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.search<|message|>{"q": "x"}<|call|>'
    )
    with_calls = [d for d in deltas(text, ["search"], interval=1000) if "tool_calls" in d]
    assert len(with_calls) == 1
    (entry,) = with_calls[0]["tool_calls"]
    assert (entry["index"], entry["function"]) == (0, {"name": "search", "arguments": '{"q": "x"}'})
    assert with_calls[0]["reasoning"] == "Plan."
