"""The canonical malformed fixtures of the reference's emulation checklist (harmony-and-servers.md
§6 item 3), each played to every emulated server it describes.

One parametrised table per fixture; ids name the fixture and the target. Expected values come
from the reference: parser outcomes and exact ``HarmonyError`` texts (§1.5), vLLM's
classification and error mapping (§2.3–§2.5), Ollama's string parser (§3), llama.cpp's grammar
(§4.1) and LM Studio's known behaviour (§4.3). A server is left out of a table only where the
reference says nothing that determines its output; the module docstring of each table says which.
Requests are non-streamed chat completions unless the table says otherwise.

Where the reference marks a behaviour unverified, the profile has a switch and both values are
tested (``harmony_error_status``: vLLM answered a ``HarmonyError`` with 400 in one 2026 release and
with 500 in a later one, §2.5).
"""

from __future__ import annotations

import pytest
from conformance_support import Out, fail, out, peg_500

TEXT_ANSWER = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>"


def harmony_error(message: str, skipped: Out) -> list[tuple[str, Out]]:
    """How each vLLM profile answers a non-streamed ``HarmonyError`` (reference §2.5).

    Current (``vllm``, 0.32/0.33): ``HarmonyParser.process_chunk`` catches the error per token and
    skips the token (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, same at v0.33.0): a header
    rejected at ``<|message|>`` leaves the parser expecting ``<|start|>``, so that message is
    dropped, later messages still parse, HTTP 200 (``skipped``; measured with real vLLM 0.32 for
    the duplicate recipient, shared/reference/vllm-on-cpu.md). Earlier 2026 releases
    (``harmony_errors=raise``): nested ``ErrorResponse``, 500 ``InternalServerError`` (vllm#51977)
    or, with ``harmony_error_status=400``, 400 ``BadRequestError``. 2025 (``vllm-2025``): the
    exception escapes the handler and the API router answers 500 with type ``Internal Server
    Error`` (the body hiyouga/LlamaFactory PR #10269 quotes). 0.10.1: the same 500, in the flat body
    of that build.
    """
    return [
        ("vllm", skipped),
        ("vllm harmony_errors=raise", fail(500, message, "InternalServerError")),
        ("vllm harmony_errors=raise harmony_error_status=400", fail(400, message, "BadRequestError")),
        ("vllm-2025", fail(500, message, "Internal Server Error")),
        ("vllm-0.10.1", fail(500, message, "Internal Server Error")),
    ]


def table(fixture: str, rows: list[tuple[str, Out]]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("target", "expected"), [pytest.param(t, e, id=f"{fixture}-{t.replace(' ', ':')}") for t, e in rows]
    )


# --------------------------------------------------------------------------- duplicate to=

DUPLICATE_TO = "<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>"


@table(
    "duplicate-to",
    [
        *harmony_error('unexpected tokens remaining in message header: Some("to=functions.x")', Out()),
        ("ollama", Out(calls=(("x", "{}"),), content="")),  # §3: the first `to=` field is the recipient
        ("llamacpp", peg_500()),  # §4.1: a malformed header fails the turn
        ("lmstudio", Out(content="")),  # §4.3: a call that fails to parse is omitted
    ],
)
def test_duplicate_recipient(target, expected):
    """§1.5: two ``to=`` → ``unexpected tokens remaining in message header: Some("to=functions.x")``."""
    assert out(target, DUPLICATE_TO, tools=["x"]) == expected


# --------------------------------------------------------------------------- space after <|constrain|>

SPACE_AFTER_CONSTRAIN = "<|channel|>commentary to=functions.x <|constrain|> json<|message|>{}<|call|>"


@table(
    "space-after-constrain",
    [
        *harmony_error('unexpected tokens remaining in message header: Some("to=functions.x")', Out()),
        ("ollama", Out(calls=(("x", "{}"),), content="")),
        ("llamacpp", peg_500()),
        ("lmstudio", Out(content="")),
    ],
)
def test_space_after_constrain(target, expected):
    """§1.5: ``<|constrain|> json`` splits into two header parts → the same HarmonyError."""
    assert out(target, SPACE_AFTER_CONSTRAIN, tools=["x"]) == expected


# --------------------------------------------------------------------------- <|end|><|return|>

END_RETURN = "<|channel|>final<|message|>Hi<|end|><|return|>"


@table(
    "end-return",
    [
        *harmony_error("Unexpected token 200002 while expecting start token 200006", Out(content="Hi")),
        ("ollama", Out(content="Hi", reasoning=None)),  # §3: <|return|> is end-of-generation, never text
    ],
)
def test_end_then_return(target, expected):
    """§1.5: any token after ``<|end|>`` but ``<|start|>`` → ``Unexpected token 200002 …``.

    llama.cpp and LM Studio: the reference does not say what they do with a stop token after
    ``<|end|>``."""
    assert out(target, END_RETURN) == expected


# --------------------------------------------------------------------------- <|end|><|call|>

END_CALL = "<|channel|>commentary to=functions.x <|constrain|>json<|message|>{}<|end|><|call|>"


@table(
    "end-call",
    [
        *harmony_error("Unexpected token 200012 while expecting start token 200006", Out(calls=(("x", "{}"),))),
        ("ollama", Out(calls=(("x", "{}"),), content="")),  # §3: <|call|> ends generation; the call parses
    ],
)
def test_end_then_call(target, expected):
    """§1.5: ``<|end|><|call|>`` → ``Unexpected token 200012 …`` (charmbracelet/crush#611)."""
    assert out(target, END_CALL, tools=["x"]) == expected


# --------------------------------------------------------------------------- text after <|end|>

TEXT_AFTER_END = "<|channel|>analysis<|message|>x<|end|>garbage<|start|>assistant<|channel|>final<|message|>Hi<|return|>"


@table(
    "text-after-end",
    [
        *harmony_error("Unexpected token 6802 while expecting start token 200006", Out(content="Hi", reasoning="x")),
        ("ollama", Out(content="Hi", reasoning="x")),  # §3: text between <|end|> and <|start|> is discarded
        ("llamacpp", peg_500()),  # §4.1: `(start any)* (tool_call | start final)` has no branch for it
    ],
)
def test_text_after_end(target, expected):
    """§1.5: stray text after ``<|end|>`` → ``Unexpected token {id} …`` with its first token (``garbage`` = 6802)."""
    assert out(target, TEXT_AFTER_END) == expected


# --------------------------------------------------------------------------- missing <|end|>

MISSING_END = "<|channel|>analysis<|message|>think<|start|>assistant<|channel|>final<|message|>Hi<|return|>"
SWALLOWED = "think<|start|>assistant<|channel|>final<|message|>Hi"


@table(
    "missing-end",
    [
        ("vllm", Out(reasoning=SWALLOWED)),  # §2.3: one analysis message → reasoning, no content
        ("vllm-2025", Out(reasoning=SWALLOWED)),  # parse_chat_output: the only message is the reasoning
        ("ollama", Out(content="", reasoning=SWALLOWED)),  # only <|end|> ends content (harmonyparser.go)
    ],
)
def test_missing_end_before_start(target, expected):
    """§1.5: ONE analysis message whose text carries the special tokens as literal text."""
    assert out(target, MISSING_END) == expected


# --------------------------------------------------------------------------- doubled <|channel|>

DOUBLED_FIRST = "<|channel|>analysis<|channel|>final<|message|>x<|end|>"
DOUBLED_LATER = (
    "<|channel|>analysis<|message|>a<|end|>"
    "<|start|>assistant<|channel|>commentary<|channel|>commentary to=functions.f<|message|>{}<|call|>"
)


@table(
    "doubled-channel-first",
    [
        ("vllm", Out(reasoning="x")),  # oss-harmony: channel analysis, no recipient (both channel sections cut)
        # openai-harmony 0.0.8: recipient `<|channel|>final` starts with `<|`: not a function → analysis
        ("vllm harmony_library=openai-harmony-0.0.8", Out(reasoning="x")),
        ("ollama", Out(content="x")),  # channel `analysis<|channel|>final` is unknown → content
    ],
)
def test_doubled_channel_on_the_first_message(target, expected):
    """§1.5: channel ``analysis``, **recipient ``<|channel|>final``**."""
    assert out(target, DOUBLED_FIRST) == expected


@table(
    "doubled-channel-later",
    [
        # oss-harmony 0.0.11 (vLLM 0.32/0.33) cuts both channel sections: an assistant call to f.
        ("vllm", Out(reasoning="a", calls=(("f", "{}"),))),
        # openai-harmony 0.0.8: role `tool`: vLLM drops non-assistant messages
        ("vllm harmony_library=openai-harmony-0.0.8", Out(reasoning="a")),
        ("vllm-2025", Out(reasoning="a", calls=(("f", "{}"),))),  # OpenAIToolParser checks no author
    ],
)
def test_doubled_channel_on_a_later_tool_call(target, expected):
    """§1.5: role ``tool`` named ``assistant<|channel|>commentary``, recipient ``functions.f`` ("vLLM
    then drops it as non-assistant"; the 2025 ``OpenAIToolParser`` at ``0558e317`` has no author check)."""
    assert out(target, DOUBLED_LATER, tools=["f"]) == expected


# --------------------------------------------------------------------------- <|channel|><|message|>

EMPTY_CHANNEL = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|><|message|>Hi<|return|>"


@table(
    "empty-channel",
    [
        *harmony_error("channel marker present but no channel value found in header", Out(reasoning="x")),
        ("ollama", Out(content="Hi", reasoning="x")),  # empty channel leaves the state: content
        ("llamacpp", peg_500()),
    ],
)
def test_channel_marker_without_value(target, expected):
    """§1.5: ``<|channel|><|message|>`` → ``channel marker present but no channel value found in header``."""
    assert out(target, EMPTY_CHANNEL) == expected


# --------------------------------------------------------------------------- Unknown role: final

UNKNOWN_ROLE = "<|channel|>analysis<|message|>x<|end|><|start|>final<|message|>Hi<|return|>"


@table(
    "unknown-role-final",
    [
        *harmony_error("Unknown role: final", Out(reasoning="x")),
        ("ollama", Out(content="Hi", reasoning="x")),  # role `final`, no channel: content
        ("llamacpp", peg_500()),
    ],
)
def test_unknown_role_final(target, expected):
    """§1.5: an unknown single header part → ``Unknown role: final``."""
    assert out(target, UNKNOWN_ROLE) == expected


# --------------------------------------------------------------------------- assistant:name

ROLE_WITH_NAME = "<|channel|>analysis<|message|>x<|end|><|start|>assistant:bob<|channel|>final<|message|>Hi<|return|>"


@table(
    "assistant-name",
    [
        *harmony_error("Unknown role: assistant:bob", Out(reasoning="x")),
        ("ollama", Out(content="Hi", reasoning="x")),  # the role field is not checked
        ("llamacpp", peg_500()),
    ],
)
def test_role_with_name(target, expected):
    """§1.5: ``role:name`` is not parsed back → ``Unknown role: assistant:bob``."""
    assert out(target, ROLE_WITH_NAME) == expected
