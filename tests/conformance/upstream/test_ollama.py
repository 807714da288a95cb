"""Ollama's own Harmony tests, converted: ``harmony/harmonyparser_test.go`` and
``server/routes_harmony_streaming_test.go`` at ollama/ollama@fb30760996871fa9460115c753afd2c60d4ab0f7
(the commit :mod:`mockoss.profiles.ollama.parser` was read at).

Inputs and expected values are the upstream tables'; each runs through the function of the
``ollama`` profile that reproduces the Go function the upstream test exercises:

* ``HarmonyParser.parseHeader`` / ``AddContent`` / ``AddImplicitStart`` →
  :func:`~mockoss.profiles.ollama.parser.parse_header` and
  :class:`~mockoss.profiles.ollama.parser.StringParser` (events ``start``/``header``/``content``/``end``
  stand for ``HarmonyEventMessageStart``/``HeaderComplete``/``ContentEmitted``/``MessageEnd``).
* ``FunctionNameMap`` → :class:`~mockoss.profiles.ollama.parser.FunctionNameMap`.
* The route tests feed the runner's ``CompletionResponse`` pieces to ``ChatHandler``; the part that
  turns pieces into chunk content/thinking/tool calls is ``HarmonyMessageHandler`` with its tool
  accumulator, here :class:`~mockoss.profiles.ollama.parser.MessageHandler` fed the same pieces with
  the same ``done`` flags (a chunk is emitted when a piece yields content, thinking or a call, as
  the upstream test filters them). The tools are the upstream ``getTestTools()`` names.

Left out (outside what mockoss emulates):

* ``server/routes_generate_test.go`` ``TestChatHandlerHarmonyPreservesStructuralTokens`` and the
  ``chatModeForModel`` check: which tokens Ollama asks its runner to keep and how it picks a chat
  execution mode for a GGUF; mockoss has no runner or model files.
* ``convert/convert_gptoss_test.go`` (GGUF tensor conversion), ``cmd/``, ``integration/`` (need a
  real model), ``openai/responses_test.go`` and ``middleware/anthropic_test.go`` (they only use
  ``gpt-oss`` as a model name in request-translation tests, not Harmony behaviour).
* The route tests' ``done``/``done_reason`` framing and timing: mockoss's native stream framing is
  covered by ``tests/profiles/test_ollama_native.py``.
"""

from __future__ import annotations

import json

import pytest
from upstream_support import case

from mockoss.profiles.ollama.parser import FunctionNameMap, Header, MessageHandler, StringParser, parse_header

SRC = "ollama/ollama@fb30760996871fa9460115c753afd2c60d4ab0f7"
PARSER_TEST = f"{SRC}:harmony/harmonyparser_test.go"
ROUTES_TEST = f"{SRC}:server/routes_harmony_streaming_test.go"


def _case(source: str, test: str, *values, xfail: str | None = None):
    return case("ollama", source, test, *values, xfail=xfail)


START, END = ("start", None), ("end", None)


def header(role: str, channel: str = "", recipient: str = "") -> tuple[str, Header]:
    return ("header", Header(role=role, channel=channel, recipient=recipient))


def content(text: str) -> tuple[str, str]:
    return ("content", text)


def parser(implicit_start: bool = False) -> StringParser:
    p = StringParser()
    if implicit_start:
        p.prefill("<|start|>assistant")  # AddImplicitStart
    return p


# --------------------------------------------------------------------------- TestHeaderParsing

HEADERS = [
    ("assistant<|channel|>analysis", "assistant", "analysis", ""),
    ("assistant<|channel|>analysis to=functions.get_weather", "assistant", "analysis", "functions.get_weather"),
    ("assistant to=functions.get_weather<|channel|>analysis", "assistant", "analysis", "functions.get_weather"),
    ("to=functions.get_weather<|channel|>analysis", "tool", "analysis", "functions.get_weather"),
    ("assistant to=functions.get_weather abc<|channel|>analysis", "assistant", "analysis", "functions.get_weather"),
    (
        "assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
        "assistant",
        "commentary",
        "functions.get_weather",
    ),
    (
        "assistant to=functions.get_weather<|channel|>commentary <|constrain|>json",
        "assistant",
        "commentary",
        "functions.get_weather",
    ),
    (
        "assistant<|channel|>commentary to=functions.get_weather<|constrain|>json",
        "assistant",
        "commentary",
        "functions.get_weather",
    ),
    (
        "assistant to=functions.get_weather<|channel|>commentary<|constrain|>json",
        "assistant",
        "commentary",
        "functions.get_weather",
    ),
]


@pytest.mark.parametrize(
    ("raw", "role", "channel", "recipient"),
    [_case(PARSER_TEST, f"TestHeaderParsing[{i}]", *row) for i, row in enumerate(HEADERS)],
)
def test_header_parsing(raw, role, channel, recipient):
    assert parse_header(raw) == Header(role=role, channel=channel, recipient=recipient)


# --------------------------------------------------------------------------- TestHarmonyParserHeaderEvent

HEADER_EVENTS = [
    ("<|start|>user<|message|>What is 2 + 2?<|end|>", False, ("user", "", "")),
    ("<|start|>assistant<|channel|>analysis<|message|>What is 2 + 2?<|end|>", False, ("assistant", "analysis", "")),
    (
        (
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
            '{"location":"San Francisco"}<|call|><|start|>functions.get_weather to=assistant<|message|>'
            '{"sunny": true, "temperature": 20}<|end|>'
        ),
        False,
        ("assistant", "commentary", "functions.get_weather"),
    ),
    (
        (
            "<|channel|>analysis<|message|>User asks weather in SF. We need location. Use get_current_weather with "
            'location "San Francisco, CA".<|end|><|start|>assistant<|channel|>commentary '
            'to=functions.get_current_weather <|constrain|>json<|message|>{"location":"San Francisco, CA"}<|call|>'
        ),
        True,
        ("assistant", "analysis", ""),
    ),
]


@pytest.mark.parametrize(
    ("text", "implicit_start", "want"),
    [_case(PARSER_TEST, f"TestHarmonyParserHeaderEvent[{i}]", *row) for i, row in enumerate(HEADER_EVENTS)],
)
def test_first_header_event(text, implicit_start, want):
    events = parser(implicit_start).add(text)
    first = next(value for kind, value in events if kind == "header")
    assert first == Header(*want)


# --------------------------------------------------------------------------- TestHarmonyParserNonStreaming

NON_STREAMING = [
    ("<|start|>user<|message|>What is 2 + 2?<|end|>", False, [START, header("user"), content("What is 2 + 2?"), END]),
    (
        "<|start|>assistant<|channel|>analysis<|message|>The answer is 4<|end|>",
        False,
        [START, header("assistant", "analysis"), content("The answer is 4"), END],
    ),
    (
        "<|start|>assistant<|channel|>commentary to=functions.calc<|message|>Computing...<|end|>",
        False,
        [START, header("assistant", "commentary", "functions.calc"), content("Computing..."), END],
    ),
    ("<|start|>user<|message|><|end|>", False, [START, header("user"), END]),
    (
        "<|start|>user<|message|>Hello<|end|><|start|>assistant<|message|>Hi!<|end|>",
        False,
        [START, header("user"), content("Hello"), END, START, header("assistant"), content("Hi!"), END],
    ),
    (
        "<|channel|>analysis<|message|>Thinking about the request<|end|>",
        True,
        [START, header("assistant", "analysis"), content("Thinking about the request"), END],
    ),
]


@pytest.mark.parametrize(
    ("text", "implicit_start", "want"),
    [_case(PARSER_TEST, f"TestHarmonyParserNonStreaming[{i}]", *row) for i, row in enumerate(NON_STREAMING)],
)
def test_non_streaming_events(text, implicit_start, want):
    assert parser(implicit_start).add(text) == want


# --------------------------------------------------------------------------- TestHarmonyParserStreaming

STREAMING = {
    "simple message streamed character by character": (
        False,
        [
            ("<", []),
            ("|", []),
            ("start|>u", [START]),
            ("ser<|mess", []),
            ("age|>Hi", [header("user"), content("Hi")]),
            (" there", [content(" there")]),
            ("<|e", []),
            ("nd|>", [END]),
        ],
    ),
    "message with channel streamed": (
        False,
        [
            ("<|start|>assistant", [START]),
            ("<|chan", []),
            ("nel|>analysis", []),
            ("<|message|>", [header("assistant", "analysis")]),
            ("Thinking", [content("Thinking")]),
            ("...", [content("...")]),
            ("<|end|>", [END]),
        ],
    ),
    "message with channel and recipient": (
        False,
        [
            (
                "<|start|>assistant<|channel|>commentary to=functions.calc<|message|>",
                [START, header("assistant", "commentary", "functions.calc")],
            ),
            ('{"x": 5}', [content('{"x": 5}')]),
            ("<|end|>", [END]),
        ],
    ),
    "message with channel and recipient (receipient before channel)": (
        False,
        [
            (
                "<|start|>assistant to=functions.calc<|channel|>commentary<|message|>",
                [START, header("assistant", "commentary", "functions.calc")],
            ),
            ('{"x": 5}', [content('{"x": 5}')]),
            ("<|end|>", [END]),
        ],
    ),
    "implicit start with channel": (
        True,
        [
            ("<|channel|>thinking", [START]),
            ("<|message|>", [header("assistant", "thinking")]),
            ("Processing request", [content("Processing request")]),
            ("<|end|>", [END]),
        ],
    ),
    "multiple messages streamed": (
        False,
        [
            ("<|start|>user<|message|>Hello<|end|>", [START, header("user"), content("Hello"), END]),
            ("<|start|>", [START]),
            ("assistant<|message|>", [header("assistant")]),
            ("Hi!", [content("Hi!")]),
            ("<|end|>", [END]),
        ],
    ),
    "empty message": (False, [("<|start|>system<|message|><|end|>", [START, header("system"), END])]),
    "partial tag that looks like end but isn't": (
        False,
        [
            ("<|start|>user<|message|>test<|e", [START, header("user"), content("test")]),
            ("xample|>more", [content("<|example|>more")]),
            ("<|end|>", [END]),
        ],
    ),
}


@pytest.mark.parametrize(
    ("implicit_start", "steps"),
    [_case(PARSER_TEST, f"TestHarmonyParserStreaming/{desc}", *row) for desc, row in STREAMING.items()],
)
def test_streaming_events(implicit_start, steps):
    p = parser(implicit_start)
    got = [(piece, p.add(piece)) for piece, _ in steps]
    assert got == steps


# --------------------------------------------------------------------------- FunctionNameMap

VALID_CHARS = [
    ("replace spaces with underscores", "get weather", "get_weather"),
    ("replace hyphens with underscores", "get-weather", "get_weather"),
    ("replace periods with underscores", "get.weather", "get_weather"),
    ("disallow non-word characters", "get weather!", "get_weather"),
    ("strip out invalid non-alphanumeric unicode characters", "a\U0001fae0bc", "abc"),
    ("names that only contain invalid characters", "\U0001fae0", "unnamed"),
    ("leading number", "123", "_123"),
    ("$ allowed", "$", "$"),
    ("allow weird unicode letter characters", "𝓸𝓵𝓵𝓪𝓶𝓪", "𝓸𝓵𝓵𝓪𝓶𝓪"),
    ("disallow non-word characters that look like words", "ⓞⓛⓛⓐⓜⓐ123", "_123"),
]


@pytest.mark.parametrize(
    ("name", "want"),
    [_case(PARSER_TEST, f"TestFunctionConvertToValidChars/{d}", name, want) for d, name, want in VALID_CHARS],
)
def test_function_name_valid_chars(name, want):
    assert FunctionNameMap._valid_chars(name) == want


CONVERT_AND_ADD = [
    ("basic dupe handling", ["get weather", "get weather"], ["get_weather", "get_weather_2"]),
    (
        "dupes from different user-specified names",
        ["get weather", "get_weather", "get-weather"],
        ["get_weather", "get_weather_2", "get_weather_3"],
    ),
    (
        "non dupes after dupes",
        ["get weather", "get_weather", "get-weather", "something-different"],
        ["get_weather", "get_weather_2", "get_weather_3", "something_different"],
    ),
    ("multiple sets of dupes", ["a", "a", "b", "a", "a", "b", "a"], ["a", "a_2", "b", "a_3", "a_4", "b_2", "a_5"]),
    (
        "built-in functions should not be renamed",
        ["browser.open", "python", "not.a.built-in.function", "browser.not_a_real_built_in"],
        ["browser.open", "python", "not_a_built_in_function", "browser_not_a_real_built_in"],
    ),
]


@pytest.mark.parametrize(
    ("names", "want"),
    [_case(PARSER_TEST, f"TestFunctionConvertAndAdd/{d}", names, want) for d, names, want in CONVERT_AND_ADD],
)
def test_function_name_convert_and_add(names, want):
    mapping = FunctionNameMap()
    for name, expected in zip(names, want, strict=True):
        assert mapping.add(name) == expected
        assert mapping.to_prompt[name] == expected  # userToHarmony
        assert mapping.to_user[expected] == name  # harmonyToUser


# --------------------------------------------------------------------------- routes: ChatHandler with the parser

TOOLS = ("get_weather", "calculate")  # getTestTools()


def chunks(pieces: list[tuple[str, bool]]) -> list[tuple[int, str, str, object]]:
    """``(piece index, content, thinking, call)`` for every piece that yields output."""
    handler = MessageHandler.for_request(tool_names=TOOLS)
    out = []
    for i, (piece, done) in enumerate(pieces):
        text, thinking, call = handler.add(piece, done)
        if text or thinking or call is not None:
            out.append((i, text, thinking, call))
    return out


REALTIME = {
    "content streams as it arrives": [
        ("<|message|>Hello", False, "Hello", "", None),
        (", world", False, ", world", "", None),
        ("!<|end|>", True, "!", "", None),
    ],
    "thinking streams separately from content": [
        ("<|channel|>analysis<|message|>Thinking...", False, "", "Thinking...", None),
        ("<|end|>", False, "", "", None),
        ("<|start|>assistant<|message|>Answer", False, "Answer", "", None),
        ("<|end|>", True, "", "", None),
    ],
    "partial tags buffer until complete": [
        ("<|chan", False, "", "", None),
        ("nel|>analysis<|mess", False, "", "", None),
        ("age|>Deep ", False, "", "Deep ", None),
        ("thought<|end|>", False, "", "thought", None),
        ("<|start|>assistant<|message|>Done<|end|>", True, "Done", "", None),
    ],
    "simple assistant after analysis": [
        (
            "<|channel|>analysis<|message|>Think<|end|><|start|>assistant<|message|>Answer<|end|>",
            True,
            "Answer",
            "Think",
            None,
        ),
    ],
    "tool call parsed and returned correctly": [
        (
            (
                '<|channel|>commentary to=functions.get_weather<|message|>{"location":"San Francisco"}<|end|>'
                "<|start|>assistant<|message|>The weather is sunny<|end|>"
            ),
            True,
            "The weather is sunny",
            "",
            ("get_weather", {"location": "San Francisco"}),
        ),
    ],
    "tool call with streaming JSON across chunks": [
        ('<|channel|>commentary to=functions.calculate<|message|>{"expr', False, "", "", None),
        ('ession":"2+', False, "", "", None),
        ('2"}', True, "", "", ("calculate", {"expression": "2+2"})),
    ],
}


@pytest.mark.parametrize(
    "steps", [_case(ROUTES_TEST, f"TestChatHarmonyParserStreamingRealtime/{d}", s) for d, s in REALTIME.items()]
)
def test_route_chunks_arrive_as_the_pieces_do(steps):
    got = chunks([(piece, done) for piece, done, *_ in steps])
    want = [(i, c, t, call) for i, (_, _, c, t, call) in enumerate(steps) if c or t or call]
    assert [(i, c, t) for i, c, t, _ in got] == [(i, c, t) for i, c, t, _ in want]
    got_calls = [(call.name, json.loads(call.arguments)) for *_, call in got if call is not None]
    assert got_calls == [call for *_, call in want if call is not None]


@pytest.mark.parametrize(
    "pieces",
    [_case(ROUTES_TEST, "TestChatHarmonyParserStreamingSimple", ["<|message|>First ", "chunk ", "here<|end|>"])],
)
def test_route_streaming_simple(pieces):
    got = chunks([(piece, i == len(pieces) - 1) for i, piece in enumerate(pieces)])
    assert "".join(c for _, c, _, _ in got) == "First chunk here"
    assert sum(1 for _, c, _, _ in got if c) >= 2  # streamed, not one chunk at the end


STREAMING_TOTALS = {
    "simple message without thinking": (
        ["<|start|>assistant<|message|>Hello, ", "how can I help?", "<|end|>"],
        "Hello, how can I help?",
        "",
    ),
    "message with analysis channel for thinking": (
        [
            "<|channel|>analysis<|message|>",
            "Let me think ",
            "about this problem...",
            "<|end|>",
            "<|start|>assistant<|message|>",
            "The answer ",
            "is 42",
            "<|end|>",
        ],
        "The answer is 42",
        "Let me think about this problem...",
    ),
    "streaming with partial tags across boundaries": (
        [
            "<|chan",
            "nel|>analy",
            "sis<|mess",
            "age|>Think",
            "ing deeply...<|end|>",
            "<|start|>assi",
            "stant<|message|>Result ",
            "computed<|e",
            "nd|>",
        ],
        "Result computed",
        "Thinking deeply...",
    ),
}


@pytest.mark.parametrize(
    ("pieces", "want_content", "want_thinking"),
    [_case(ROUTES_TEST, f"TestChatHarmonyParserStreaming/{d}", *row) for d, row in STREAMING_TOTALS.items()],
)
def test_route_stream_totals(pieces, want_content, want_thinking):
    got = chunks([(piece, i == len(pieces) - 1) for i, piece in enumerate(pieces)])
    assert "".join(c for _, c, _, _ in got) == want_content
    assert "".join(t for _, _, t, _ in got) == want_thinking
