#!/usr/bin/env python
"""Prompt goldens from Ollama v0.33.0-rc2's own code: the text it renders for gpt-oss requests.

The harness (``tools/goldens/ollama_harness_prompt.go``, built by ``ollama_build.sh``) runs
Ollama's template package on the gpt-oss model's Go template for each request of :data:`REQUESTS`
(conversations beyond the golden cases' one user turn: tool calls and results, system messages,
prefills, think levels, renamed tools, Responses items) and this script writes
``tests/profiles/ollama/prompt_golden.json``: ``[{"id", "endpoint", "request", "prompt"}]``, which
``tests/profiles/ollama/test_ollama_prompt.py`` compares with :mod:`mockoss.profiles.ollama.prompt`::

    .venv/bin/python tools/goldens/ollama_prompts.py /tmp/ollama-v0.33.0-rc2/ollama_harness
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "goldens"))

from ollama_0_33_0_rc2 import rendered_prompts

from mockoss.golden.cases import Exchange

_PARAMS = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City <name> & country"},
        "units": {"type": ["string", "null"]},
        "days": {"type": "integer"},
    },
    "required": ["location"],
}
_TOOLS = [
    {"type": "function", "function": {"name": "get-weather", "description": "Weather.", "parameters": _PARAMS}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
]
_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get-weather", "arguments": '{"location":"Paris <FR>","days":2.0}'},
}
_CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "system", "content": "Use tools."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "reasoning": "Call it.", "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
    {"role": "user", "content": [{"type": "text", "text": "And "}, {"type": "text", "text": "tomorrow?"}]},
]
_NATIVE = [
    {"role": "user", "content": "Weather in Paris? \u00e9\u2028"},
    {
        "role": "assistant",
        "content": "",
        "thinking": "Need tool.",
        "tool_calls": [{"function": {"name": "get_weather", "arguments": {"z": [1, 2.5], "a": {"b": True}}}}],
    },
    {"role": "tool", "tool_name": "get_weather", "content": '{"t":20}'},
    {"role": "assistant", "content": "It is 20.", "thinking": "Answer."},
    {"role": "user", "content": "Thanks"},
    {"role": "user", "content": "Again"},
]
#: (id, endpoint, request body)
REQUESTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("chat-history-tools", "/v1/chat/completions", {"model": "m", "messages": _CHAT, "tools": _TOOLS}),
    ("chat-effort-none", "/v1/chat/completions", {"model": "m", "messages": _CHAT[2:3], "reasoning_effort": "none"}),
    (
        "chat-effort-minimal",
        "/v1/chat/completions",
        {"model": "m", "messages": _CHAT[2:3], "reasoning_effort": "minimal"},
    ),
    ("chat-effort-xhigh", "/v1/chat/completions", {"model": "m", "messages": _CHAT[2:3], "reasoning_effort": "xhigh"}),
    (
        "chat-prefill-thinking",
        "/v1/chat/completions",
        {"model": "m", "messages": [*_CHAT[2:5], {"role": "assistant", "content": "", "reasoning": "Hmm"}]},
    ),
    ("api-chat-history", "/api/chat", {"model": "m", "messages": _NATIVE, "tools": _TOOLS}),
    ("api-chat-think-false", "/api/chat", {"model": "m", "messages": _NATIVE[:1], "think": False}),
    ("api-chat-think-low", "/api/chat", {"model": "m", "messages": _NATIVE[:1], "think": "low"}),
    ("api-chat-think-max", "/api/chat", {"model": "m", "messages": _NATIVE[:1], "think": "max"}),
    ("api-chat-prefill", "/api/chat", {"model": "m", "messages": [*_NATIVE[:4]], "stream": False}),
    ("api-generate-system", "/api/generate", {"model": "m", "prompt": "Hi", "system": "Sys.", "think": "high"}),
    ("api-generate-think-false", "/api/generate", {"model": "m", "prompt": "Hi", "think": False}),
    (
        "responses-items",
        "/v1/responses",
        {
            "model": "m",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather?"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "Call it."},
                {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"location":"Paris"}'},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]},
                {"role": "user", "content": [{"type": "input_text", "text": "More?"}]},
            ],
            "tools": [
                {"type": "function", "name": "get_weather", "description": "W.", "parameters": _PARAMS},
                {
                    "type": "namespace",
                    "name": "fs",
                    "tools": [
                        {
                            "type": "function",
                            "name": "read",
                            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                        }
                    ],
                },
            ],
            "reasoning": {"effort": "low"},
        },
    ),
    (
        "responses-merge",
        "/v1/responses",
        {
            "model": "m",
            "input": [
                {"role": "user", "content": "Go"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": ""},
                {"type": "message", "role": "assistant", "content": "Working."},
                {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]},
                {"type": "reasoning", "encrypted_content": "Left over."},
            ],
        },
    ),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("harness", type=Path, help="the built ollama_harness")
    parser.add_argument(
        "--template", type=Path, help="gpt-oss's Go template (default: gptoss.gotmpl beside the harness)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "profiles" / "ollama" / "prompt_golden.json")
    args = parser.parse_args(argv)
    template = args.template or args.harness.parent / "gptoss.gotmpl"
    plan = [(ident, Exchange(ident, endpoint, False, body)) for ident, endpoint, body in REQUESTS]
    prompts = rendered_prompts(args.harness, template, plan)
    records = [
        {"id": i, "endpoint": e.endpoint, "request": e.request, "prompt": p}
        for (i, e), p in zip(plan, prompts, strict=True)
    ]
    args.out.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(records)} prompts to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
