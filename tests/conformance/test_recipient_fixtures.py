"""Checklist fixtures that parse without error but put something odd in the recipient, the final
text or the stop token (harmony-and-servers.md §6 item 3, second half; see
test_malformed_fixtures.py for the conventions).
"""

from __future__ import annotations

import pytest
from conformance_support import Out, finish_reason, out, peg_500


def table(fixture: str, rows: list[tuple[str, Out]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("target", "expected"), [pytest.param(t, e, id=f"{fixture}-{t.replace(' ', ':')}") for t, e in rows]
    )


# --------------------------------------------------------------------------- final <|constrain|>json

CONSTRAINED_FINAL = (
    "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final <|constrain|>json<|message|>"
    '{"a":1}<|return|>'
)
FINAL_JSON = '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final json<|message|>{"a":1}<|return|>'


@table(
    "final-constrain-json-chat",
    [
        ("vllm", Out(content='{"a":1}', reasoning="x")),  # §2.3 _normalize_recipient: `<|constrain|>json` → None
        ("vllm-2025", Out(content='{"a":1}', reasoning="x")),  # OpenAIToolParser: final → content, recipient or not
        ("ollama", Out(content='{"a":1}', reasoning="x")),  # §3: `<|constrain|>json` is never a recipient
    ],
)
def test_constrained_final_in_chat(target, expected):
    """§1.5: ``final <|constrain|>json`` parses with **recipient ``<|constrain|>json``** (openai/harmony#144)."""
    assert out(target, CONSTRAINED_FINAL) == expected


@table(
    "final-constrain-json-responses",
    [
        # §2.4 rule 5 without normalisation: an mcp_call named `<|constrain|>json` (vllm#45570).
        ("vllm-2025", Out(reasoning="x", items=("reasoning", "mcp_call"), calls=(("<|constrain|>json/<|constrain|>json", '{"a":1}'),))),
        ("vllm-0.10.1", Out(reasoning="x", items=("reasoning", "mcp_call"), calls=(("<|constrain|>json/<|constrain|>json", '{"a":1}'),))),
        # §2.4 last paragraph (inferred): the newest path normalises, so a message.
        ("vllm", Out(content='{"a":1}', reasoning="x", items=("reasoning", "message"))),
    ],
)
def test_constrained_final_in_responses(target, expected):
    assert out(target, CONSTRAINED_FINAL, endpoint="responses") == expected


@table(
    "final-json",
    [
        # §2.3 (inferred from source): recipient `json` is accepted by is_function_recipient in the
        # chat path → a tool call named `json` when tools are enabled.
        ("vllm", Out(reasoning="x", calls=(("json", '{"a": 1}'),))),
        ("vllm-2025", Out(content='{"a":1}', reasoning="x")),  # final → content
        ("ollama", Out(content='{"a":1}', reasoning="x")),  # `json` has no `to=`: not a recipient
    ],
)
def test_final_json_recipient(target, expected):
    """§1.5: ``final json`` parses with **recipient ``json``**, which ``_normalize_recipient`` keeps."""
    assert out(target, FINAL_JSON, tools=["lookup"]) == expected


# --------------------------------------------------------------------------- bare recipients

BARE_NO_TO = "<|channel|>commentary functions.x<|message|>{}<|call|>"
NO_NAMESPACE = (
    "<|channel|>analysis<|message|>x<|end|>"
    '<|start|>assistant to=lookup_weather<|channel|>commentary <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'
)


@table(
    "bare-recipient-without-to",
    [
        ("vllm", Out(calls=(("x", "{}"),))),  # §1.5: a single header part is the recipient
        ("ollama", Out(content="{}")),  # §3: a bare recipient without `to=` is not recognised → content
        ("llamacpp", peg_500()),  # §4.1: calls only as `to=functions.NAME`
    ],
)
def test_bare_recipient_without_to(target, expected):
    assert out(target, BARE_NO_TO, tools=["x"]) == expected


@table(
    "recipient-without-functions-prefix",
    [
        ("vllm", Out(reasoning="x", calls=(("lookup_weather", '{"location": "Tokyo"}'),))),  # §2.3: bare → TOOL
        ("vllm-2025", Out(reasoning="x")),  # §2.3 OpenAIToolParser: not `functions.` → dropped
        ("ollama", Out(content="", reasoning="x", calls=(("lookup_weather", '{"location":"Tokyo"}'),))),
    ],
)
def test_recipient_without_functions_prefix(target, expected):
    """openai/harmony test-data/test_simple_tool_call.txt: ``to=lookup_weather`` (no ``functions.``)."""
    assert out(target, NO_NAMESPACE, tools=["lookup_weather"]) == expected


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        pytest.param(["lookup_weather"], Out(reasoning="x", items=("reasoning", "function_call"), calls=(("lookup_weather", '{"location": "Tokyo"}'),)), id="declared"),
        pytest.param(["other"], Out(reasoning="x", items=("reasoning", "mcp_call"), calls=(("lookup_weather/lookup_weather", '{"location": "Tokyo"}'),)), id="undeclared"),
    ],
)
def test_bare_recipient_in_vllm_responses(tools, expected):
    """§2.2/§2.4: Responses passes the declared function names; an undeclared bare name is an MCP call."""
    assert out("vllm", NO_NAMESPACE, endpoint="responses", tools=tools) == expected


# --------------------------------------------------------------------------- hyphenated names

HYPHENATED = '<|channel|>commentary to=functions.web-browsing <|constrain|>json<|message|>{"q":"x"}<|call|>'


@table(
    "hyphenated-name",
    [
        ("vllm", Out(calls=(("web-browsing", '{"q": "x"}'),))),
        ("vllm-2025", Out(reasoning='{"q":"x"}', calls=(("web-browsing", '{"q": "x"}'),))),  # parse_chat_output: 1 message
        ("ollama", Out(content="", calls=(("web-browsing", '{"q":"x"}'),))),
        ("llamacpp", Out(content="", calls=(("web-browsing", '{"q":"x"}'),))),  # a declared tool name
    ],
)
def test_hyphenated_tool_name(target, expected):
    """§1.5: ``to=functions.web-browsing`` parses fine (vllm#51977's hyphen theory is wrong, PR #52055)."""
    assert out(target, HYPHENATED, tools=["web-browsing"]) == expected


# --------------------------------------------------------------------------- to=functions.x {...} in final text

LEAK = '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>to=functions.get_weather {"location":"SF"}<|return|>'
LEAK_TEXT = 'to=functions.get_weather {"location":"SF"}'


@table(
    "leak-in-final-text",
    [
        ("vllm", Out(content=LEAK_TEXT, reasoning="x")),
        ("vllm-2025", Out(content=LEAK_TEXT, reasoning="x")),
        ("vllm-0.10.1", Out(content=LEAK_TEXT, reasoning="x")),
        ("ollama", Out(content=LEAK_TEXT, reasoning="x")),
        ("llamacpp", Out(content=LEAK_TEXT, reasoning="x")),
        ("lmstudio", Out(content=LEAK_TEXT, reasoning="x")),
    ],
)
def test_tool_call_leaked_into_final_text(target, expected):
    """§1.5: plain final text, "the classic text leak; no parser catches it" (hermes-agent#84158)."""
    assert out(target, LEAK, tools=["get_weather"]) == expected


# --------------------------------------------------------------------------- tool call ended with <|return|>

RETURN_CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|return|>'


@table(
    "call-ended-with-return",
    [
        ("vllm", Out(calls=(("get_weather", '{"city": "Oslo"}'),))),
        ("ollama", Out(content="", calls=(("get_weather", '{"city":"Oslo"}'),))),  # <|return|> is EOG like <|call|>
        ("lmstudio", Out(content="", calls=(("get_weather", '{"city":"Oslo"}'),))),
    ],
)
def test_tool_call_ended_with_return(target, expected):
    """sglang PR #10576: openai-harmony still parses a complete tool call."""
    assert out(target, RETURN_CALL, tools=["get_weather"]) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(RETURN_CALL, ("tool_calls", None), id="return"),
        pytest.param(RETURN_CALL.replace("<|return|>", "<|call|>"), ("tool_calls", 200012), id="call"),
    ],
)
def test_vllm_stop_reason_tells_return_from_call(text, expected):
    """§2.3: ``stop_reason`` is the generation-config stop token 200012 after ``<|call|>``, null after
    the EOS ``<|return|>``; ``finish_reason`` is ``tool_calls`` either way."""
    assert finish_reason("vllm", text, tools=["get_weather"]) == expected


# --------------------------------------------------------------------------- truncated analysis (max_tokens)

LONG_ANALYSIS = (
    "<|channel|>analysis<|message|>The user asks for a summary of the report in one line.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)
CUT = "The user asks for a summary"  # the first 6 analysis tokens after the 3 header tokens


@table(
    "truncated-analysis",
    [
        ("vllm", Out(reasoning=CUT)),
        ("vllm-2025", Out(reasoning=CUT)),  # parse_chat_output: no message → the open message's text
        ("ollama", Out(content="", reasoning=CUT)),
        ("lmstudio", Out(content="", reasoning=CUT)),
    ],
)
def test_analysis_truncated_by_max_tokens(target, expected):
    """§1.5: a truncated analysis is flushed as a complete message at EOS: reasoning, no answer."""
    assert out(target, LONG_ANALYSIS, max_tokens=9) == expected


@pytest.mark.parametrize("target", ["vllm", "vllm-2025"])
def test_truncated_analysis_finishes_with_length(target):
    assert finish_reason(target, LONG_ANALYSIS, max_tokens=9) == ("length", None)
