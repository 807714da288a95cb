"""The chains of requests ``tools/goldens/gptoss_reference_store.py`` sends to the gpt-oss reference server.

Each chain is sent in order to one fresh server (openai/gpt-oss@7b58334, ``gpt_oss.responses_api``);
``<resp:N>`` and ``<call:N>`` name what step ``N`` answered (the generator's docstring). The
continuations carry ``metadata.__debug``, so the answer holds the prompt the server rendered from
the merged input.
"""

from __future__ import annotations

from typing import Any

from mockoss.golden.cases import MODEL, USER_MESSAGE

CALL = "scenario-clean-tool-call-0"  # analysis, then a get_weather call
AFTER_CALL = "scenario-clean-tool-call-1"  # analysis, then a final answer
ANSWER = "scenario-clean-answer-0"  # analysis, then "2 + 2 = 4."
NO_STOP = "scenario-analysis-only-no-answer-0"  # analysis only, no <|return|> (the backend's end decides)
BAD_HEADER = "scenario-empty-channel-header-error-0"  # the final parse fails: 500, or the stream cut
_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a location.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    }
]
_DEBUG = {"__debug": True}  # the response's metadata holds the decoded prompt: the merged input, exactly
_UNKNOWN = "resp_0123456789abcdef0123456789abcdef"


def _output(call: int) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"<call:{call}>", "output": '{"sky":"sunny","celsius":20}'}


def _agent_loop(stream: bool) -> list[dict[str, Any]]:
    """A tool call, its output by ``previous_response_id`` alone (the call is only in the stored
    response), then two user turns: a chain of four, each stored."""
    s = {"stream": True} if stream else {}
    return [
        {"completion": CALL, "request": {"model": MODEL, "input": USER_MESSAGE, "tools": _TOOLS, "store": True, **s}},
        {
            "completion": AFTER_CALL,
            "request": {
                "model": MODEL,
                "input": [_output(0)],
                "previous_response_id": "<resp:0>",
                "tools": _TOOLS,
                "store": True,
                "metadata": _DEBUG,
                **s,
            },
        },
        {
            "completion": ANSWER,
            "request": {
                "model": MODEL,
                "input": "And 2 + 2?",
                "previous_response_id": "<resp:1>",
                "store": True,
                "metadata": _DEBUG,
                **s,
            },
        },
        {
            "completion": ANSWER,
            "request": {
                "model": MODEL,
                "input": [{"role": "user", "content": "Again?"}],
                "previous_response_id": "<resp:2>",
                "metadata": _DEBUG,
                **s,
            },
        },
    ]


#: chain name → {"after": the backend's end ("200002": <|return|>, or "error"), "steps": [...]}.
CHAINS: dict[str, dict[str, Any]] = {
    "agent-loop": {"after": "200002", "steps": _agent_loop(False)},
    "agent-loop-stream": {"after": "200002", "steps": _agent_loop(True)},
    "store-absent-or-false": {
        "after": "200002",
        "steps": [
            {"completion": CALL, "request": {"model": MODEL, "input": USER_MESSAGE, "tools": _TOOLS}},
            {
                "completion": AFTER_CALL,
                "request": {"model": MODEL, "input": [_output(0)], "previous_response_id": "<resp:0>", "tools": _TOOLS},
            },
            {
                "completion": CALL,
                "request": {"model": MODEL, "input": USER_MESSAGE, "tools": _TOOLS, "store": False, "stream": True},
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "And 2 + 2?",
                    "previous_response_id": "<resp:2>",
                    "metadata": _DEBUG,
                },
            },
        ],
    },
    "unknown-id": {
        "after": "200002",
        "steps": [
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": USER_MESSAGE,
                    "previous_response_id": _UNKNOWN,
                    "store": True,
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "And 2 + 2?",
                    "previous_response_id": "<resp:0>",
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": "And 2 + 2?", "previous_response_id": "", "metadata": _DEBUG},
            },
        ],
    },
    "instructions": {
        "after": "200002",
        "steps": [
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": USER_MESSAGE, "instructions": "Answer briefly.", "store": True},
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "More?",
                    "previous_response_id": "<resp:0>",
                    "store": True,
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "More?",
                    "previous_response_id": "<resp:1>",
                    "instructions": None,
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "More?",
                    "previous_response_id": "<resp:1>",
                    "instructions": "Be verbose.",
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": "More?",
                    "previous_response_id": "<resp:1>",
                    "instructions": "",
                    "metadata": _DEBUG,
                },
            },
        ],
    },
    "input-items": {
        "after": "200002",
        "steps": [
            {
                "completion": CALL,
                "request": {
                    "model": MODEL,
                    "tools": _TOOLS,
                    "store": True,
                    "input": [
                        {"role": "system", "content": "Be terse."},
                        {
                            "type": "message",
                            "role": "user",
                            "content": [
                                {"type": "input_text", "text": "Hi."},
                                {"type": "input_text", "text": "Weather?"},
                            ],
                        },
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": "Where?"}],
                        },
                        {"role": "user", "content": "Paris."},
                        {
                            "type": "reasoning",
                            "summary": [],
                            "content": [{"type": "reasoning_text", "text": "Dropped: before the last assistant."}],
                        },
                    ],
                },
            },
            {
                "completion": AFTER_CALL,
                "request": {
                    "model": MODEL,
                    "input": [_output(0)],
                    "previous_response_id": "<resp:0>",
                    "tools": _TOOLS,
                    "store": True,
                    "metadata": _DEBUG,
                },
            },
            {
                "completion": ANSWER,
                "request": {
                    "model": MODEL,
                    "input": [],
                    "previous_response_id": "<resp:1>",
                    "metadata": _DEBUG,
                    "reasoning": {"effort": "high"},
                },
            },
        ],
    },
    "max-output-tokens-cut": {
        "after": "200002",
        "steps": [
            {
                "completion": AFTER_CALL,
                "request": {"model": MODEL, "input": USER_MESSAGE, "max_output_tokens": 12, "store": True},
            },
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": "Go on.", "previous_response_id": "<resp:0>", "metadata": _DEBUG},
            },
            {
                "completion": AFTER_CALL,
                "request": {
                    "model": MODEL,
                    "input": USER_MESSAGE,
                    "max_output_tokens": 12,
                    "store": True,
                    "stream": True,
                },
            },
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": "Go on.", "previous_response_id": "<resp:2>", "metadata": _DEBUG},
            },
        ],
    },
    "parse-error-stores-nothing": {
        "after": "200002",
        "steps": [
            {
                "completion": BAD_HEADER,
                "request": {"model": MODEL, "input": USER_MESSAGE, "store": True, "stream": True},
            },
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": "Go on.", "previous_response_id": "<resp:0>", "metadata": _DEBUG},
            },
        ],
    },
    "backend-error-stores-nothing": {
        "after": "error",
        "steps": [
            {"completion": NO_STOP, "request": {"model": MODEL, "input": USER_MESSAGE, "store": True, "stream": True}},
            {
                "completion": ANSWER,
                "request": {"model": MODEL, "input": "Go on.", "previous_response_id": "<resp:0>", "metadata": _DEBUG},
            },
        ],
    },
}
