"""llama.cpp's own gpt-oss parser tests, converted: the "GPT-OSS format tests" block of
``tests/test-chat.cpp`` at ggml-org/llama.cpp@0042e2079d3428ba7af410df553202aa7fdf8d7a (the
``peg_tester("models/templates/openai-gpt-oss-120b.jinja")`` cases; the block has no function of its
own, so each case is named ``GPT-OSS[N]`` in file order, with the upstream comment).

Each upstream case gives the generated text, the request shape (declared tools, reasoning format,
JSON schema, partial or final) and the expected ``common_chat_msg``. Here the text goes through the
``llamacpp`` profile's gpt-oss parser, :func:`mockoss.profiles.llamacpp.gptoss.build_grammar` for the
same request shape, and the message must equal the upstream one (tool-call arguments compared as
JSON, as the upstream ``assert_msg_equals`` does through ``renormalize_json``). The two continuation
cases need the prefilled assistant turn, so they go through the whole profile
(``MockServer.handle``, chat endpoint; :func:`mockoss.profiles.llamacpp.options.continuation`).

Left out:

* The "LLM-jp-4.1" block that follows it (a different model's template in a GPT-OSS-like dialect,
  not gpt-oss).
* The late-2025 ``COMMON_CHAT_FORMAT_GPT_OSS`` cases (``common_chat_parse`` with the regex parser,
  which the profile reproduces as ``parser=regex``): the stored copy of that older
  ``test-chat.cpp`` could not be tied to a commit here, so it cannot be pinned.
* Grammar-generation and template-rendering checks (``run_template_test_suite``): what the model is
  constrained to sample and what prompt it sees; mockoss scripts the output, it samples nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from upstream_support import case

from mockoss.profiles.llamacpp.gptoss import build_grammar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conformance_support import out

SRC = "ggml-org/llama.cpp@0042e2079d3428ba7af410df553202aa7fdf8d7a:tests/test-chat.cpp"
HELLO = "Hello, world!\nWhat's up?"
THINK = "I'm\nthinking"
SPECIAL = ("special_function",)
CALL = [("special_function", {"arg1": 1})]


def _case(n: int, comment: str, *values, xfail: str | None = None):
    return case("llamacpp", SRC, f"GPT-OSS[{n}] {comment}", *values, xfail=xfail)


# (text, tools, reasoning_format, json_schema, partial) -> (content, reasoning, calls)
PARSER_CASES = [
    _case(
        0,
        "Basic content only - final channel",
        "<|channel|>final<|message|>" + HELLO,
        (),
        "auto",
        False,
        False,
        (HELLO, "", []),
    ),
    _case(
        1,
        "Basic content only - commentary channel",
        "<|channel|>commentary<|message|>" + HELLO,
        (),
        "auto",
        False,
        False,
        (HELLO, "", []),
    ),
    _case(
        2,
        "Analysis channel (reasoning) with final channel (content)",
        f"<|channel|>analysis<|message|>{THINK}<|end|><|start|>assistant<|channel|>final<|message|>{HELLO}",
        (),
        "auto",
        False,
        False,
        (HELLO, THINK, []),
    ),
    _case(
        3,
        "... with reasoning_format = none",
        f"<|channel|>analysis<|message|>{THINK}<|end|><|start|>assistant<|channel|>final<|message|>{HELLO}",
        (),
        "none",
        False,
        False,
        (f"<|channel|>analysis<|message|>{THINK}<|end|>{HELLO}", "", []),
    ),
    _case(
        4,
        "Analysis channel only (partial)",
        f"<|channel|>analysis<|message|>{THINK}",
        (),
        "auto",
        False,
        True,
        ("", THINK, []),
    ),
    _case(
        5,
        "Tool call with recipient in role header",
        ' to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
        SPECIAL,
        "auto",
        False,
        False,
        ("", "", CALL),
    ),
    _case(
        6,
        "Tool call with recipient in channel header",
        '<|channel|>analysis to=functions.special_function<|message|>{"arg1": 1}',
        SPECIAL,
        "auto",
        False,
        False,
        ("", "", CALL),
    ),
    _case(
        7,
        "Tool call with constraint",
        ' to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{"arg1": 1}',
        SPECIAL,
        "auto",
        False,
        False,
        ("", "", CALL),
    ),
    _case(
        8,
        "Tool call in commentary channel (channel header variant)",
        '<|channel|>commentary to=functions.special_function<|message|>{"arg1": 1}',
        SPECIAL,
        "auto",
        False,
        False,
        ("", "", CALL),
    ),
    _case(
        9,
        "Tool call with reasoning + content (analysis first, then tool call)",
        f"<|channel|>analysis<|message|>{THINK}<|end|>"
        '<|start|>assistant to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
        SPECIAL,
        "auto",
        False,
        False,
        ("", THINK, CALL),
    ),
    _case(
        10,
        "Complex tool calling",
        "<|channel|>analysis<|message|>Thinking about edit...<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.edit <|constrain|>json"
        '<|message|>{"oldString": "if (part < railCount - 1) {", "newString": "if (part < 4) {", "replaceAll": false}',
        ("edit",),
        "auto",
        False,
        False,
        (
            "",
            "Thinking about edit...",
            [
                (
                    "edit",
                    {"oldString": "if (part < railCount - 1) {", "newString": "if (part < 4) {", "replaceAll": False},
                )
            ],
        ),
    ),
    _case(
        11,
        "Structured output",
        "<|channel|>analysis<|message|>I need to output the invoice details in JSON<|end|>"
        '<|start|>assistant<|channel|>final <|constrain|>json<|message|>{"amount": 123.45, "date": "2025-12-03"}',
        (),
        "auto",
        True,
        False,
        ('{"amount": 123.45, "date": "2025-12-03"}', "I need to output the invoice details in JSON", []),
    ),
    _case(
        12,
        "Unsolicited tool call: builtin function - recipient in role",
        "<|channel|>analysis<|message|>I will execute python to say hello<|end|>"
        "<|start|>assistant to=container.exec<|channel|>commentary<|message|>python3 -c 'print(\"hello\")'",
        (),
        "auto",
        False,
        False,
        ("", "I will execute python to say hello", []),
    ),
    _case(
        13,
        "Unsolicited tool call: builtin function - recipient in channel",
        "<|channel|>analysis<|message|>I will execute python to say hello<|end|>"
        '<|start|>assistant<|channel|>commentary to=python <|constrain|>code<|message|>print("hello")',
        (),
        "auto",
        False,
        False,
        ("", "I will execute python to say hello", []),
    ),
    _case(
        14,
        "<|channel|>commentary to=assistant before reasoning",
        f"<|channel|>commentary to=assistant<|channel|>analysis<|message|>{THINK}<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{HELLO}",
        (),
        "auto",
        False,
        False,
        (HELLO, THINK, []),
    ),
    _case(
        15,
        "<|channel|>commentary to=assistant before final message",
        f"<|channel|>analysis<|message|>{THINK}<|end|>"
        f"<|start|>assistant<|channel|>commentary to=assistant<|channel|>final<|message|>{HELLO}",
        (),
        "auto",
        False,
        False,
        (HELLO, THINK, []),
    ),
]


@pytest.mark.parametrize(("text", "tools", "reasoning_format", "schema", "partial", "want"), PARSER_CASES)
def test_gpt_oss_parser(text, tools, reasoning_format, schema, partial, want):
    grammar = build_grammar(tools, "auto", reasoning_format != "none", schema)
    msg = grammar.parse(text, partial=partial)
    content, reasoning, calls = want
    assert (msg.content, msg.reasoning_content) == (content, reasoning)
    assert [(name, json.loads(args)) for name, args in msg.tool_calls] == calls


@pytest.mark.parametrize(
    ("generated", "prefill", "want"),
    [
        _case(
            16,
            "Continuation tests (content)",
            "world!\nWhat's up?",
            {"role": "assistant", "content": "Hello, ", "reasoning_content": "I'm thinking"},
            (HELLO, "I'm thinking"),
        ),
        _case(
            17,
            "Continuation tests (reasoning)",
            f" thinking<|end|><|start|>assistant<|channel|>final<|message|>{HELLO}",
            {"role": "assistant", "content": "", "reasoning_content": "I'm"},
            (HELLO, "I'm thinking"),
        ),
    ],
)
def test_gpt_oss_continuation(generated, prefill, want):
    got = out("llamacpp", generated, messages=[{"role": "user", "content": "Hey there!"}, prefill])
    assert got.status == 200, got.error
    assert (got.content, got.reasoning) == want
