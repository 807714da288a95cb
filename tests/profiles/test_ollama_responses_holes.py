"""Ollama ``/v1/responses``: a reply is built once with placeholders for its ids, times and counts,
and filled per request. Text from the request (echoed fields) or the script (answer, thinking,
tool call) that holds one of those placeholders comes back as it was, never filled in, and the
reply is otherwise the one an ordinary text gets (the same ids, drawn in the same order)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.ollama import OllamaProfile

MODEL = "gpt-oss:20b"
HOLES = (
    "@@mockoss-resp@@",
    "@@mockoss-msg@@",
    "@@mockoss-rs@@",
    "@@mockoss-fc@@",
    "@@mockoss-call@@",
    "9087650001",
    "9087650002",
    "9087650003",
    "9087650004",
)
ALL = " ".join(HOLES)
NEUTRAL = "NEUTRAL-TEXT"  # what a hole is compared against: a text no reply otherwise holds
TOOLS = [{"type": "function", "name": "get_weather"}]


def answer(final: str, thinking: str = "Hi.") -> Completion:
    return Completion.from_text(
        f"<|channel|>analysis<|message|>{thinking}<|end|><|start|>assistant<|channel|>final<|message|>{final}<|return|>"
    )


def tool(city: str, thinking: str = "Hm.") -> Completion:
    return Completion.from_text(
        f"<|channel|>analysis<|message|>{thinking}<|end|><|start|>assistant<|channel|>commentary "
        f'to=functions.get_weather <|constrain|>json<|message|>{{"city":"{city}"}}<|call|>'
    )


def text(completion: Completion, *, stream: bool, **body: object) -> str:
    view = ResponsesRequestView(model=MODEL, stream=stream, body=body)
    ctx = RequestContext(ids=IdSource(0, 0), created=1_750_000_000, prompt_tokens=100)
    reply: Reply = OllamaProfile().surface("responses", completion, view, ctx)
    assert reply.status == 200
    return (reply.body if not stream else b"".join(bytes(frame) for frame in reply.frames)).decode()


IDS = re.compile(
    r'"(?:(?:rs_|fc_)?(?:resp|msg|rs|fc)_\d+(?:_0)?|call_[a-z0-9]{8})"|"(?:created_at|completed_at|input_tokens)":\d+'
)


def ids(reply: str) -> list[str]:
    """The reply's ids and prompt count, each once, in order of first appearance (times and the
    frame count depend on the scripted text's tokens)."""
    found = IDS.findall(reply)
    assert all(not re.search(r":90876500\d\d$", item) for item in found)
    return list(dict.fromkeys(item for item in found if not item.startswith(('"created_at', '"completed_at'))))


def json_texts(reply: str) -> list[str]:
    """Every JSON string value in the reply (body, or each frame's data)."""
    datas = [reply] if not reply.startswith("event:") else [f.split("data: ", 1)[1] for f in reply.split("\n\n") if f]
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for data in datas:
        walk(json.loads(data))
    return found


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("hole", HOLES)
def test_instructions_holding_a_placeholder_come_back_verbatim(stream: bool, hole: str) -> None:
    instructions = f"keep {hole} verbatim"
    reply = text(answer("Yes."), stream=stream, input="hi", instructions=instructions)
    assert instructions in json_texts(reply)
    # Otherwise the reply of an ordinary text: the same ids, times and counts.
    plain = text(answer("Yes."), stream=stream, input="hi", instructions=f"keep {NEUTRAL} verbatim")
    assert reply.replace(hole, NEUTRAL) == plain


@pytest.mark.parametrize("stream", [False, True])
def test_scripted_answer_and_thinking_holding_placeholders_come_back_verbatim(stream: bool) -> None:
    final, thinking = f"answer {ALL} end", f"think {ALL}"
    reply = text(answer(final, thinking), stream=stream, input="hi", instructions=f"ref {ALL}")
    found = json_texts(reply)
    assert final in found and thinking in found and f"ref {ALL}" in found
    assert "@@mockoss" not in "".join(IDS.findall(reply))
    # The scripted text tokenizes differently: compare the ids, times and prompt count.
    plain = text(answer("Yes.", "Hi."), stream=stream, input="hi", instructions=f"ref {NEUTRAL}")
    assert ids(reply) == ids(plain) and len(ids(plain)) >= 3


@pytest.mark.parametrize("stream", [False, True])
def test_the_reviewers_numbers(stream: bool) -> None:
    reply = text(answer("order 9087650001 and 9087650004"), stream=stream, input="hi", instructions="ref 9087650002")
    found = json_texts(reply)
    assert "order 9087650001 and 9087650004" in found and "ref 9087650002" in found
    assert '"input_tokens":100' in reply


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_arguments_holding_placeholders_keep_the_call_ids(stream: bool) -> None:
    """The reasoning, call and function-call item ids are drawn as for an ordinary call."""
    reply = text(tool(ALL, thinking=f"Hm {ALL}."), stream=stream, input="hi", tools=TOOLS)
    assert json.dumps({"city": ALL}, separators=(",", ":")) in json_texts(reply)
    assert f"Hm {ALL}." in json_texts(reply)
    plain = text(tool("<Paris>"), stream=stream, input="hi", tools=TOOLS)
    assert ids(reply) == ids(plain) and "call_" in "".join(ids(plain))
    assert ("fc_" in "".join(ids(plain))) and (not stream or "rs_" in "".join(ids(plain)))


@pytest.mark.parametrize("stream", [False, True])
def test_echoed_numbers_equal_to_a_placeholder_are_kept(stream: bool) -> None:
    reply = text(answer("Yes."), stream=stream, input="hi", max_output_tokens=9087650003)
    assert '"max_output_tokens":9087650003' in reply
    plain = text(answer("Yes."), stream=stream, input="hi", max_output_tokens=1234567890)
    assert reply.replace("9087650003", "1234567890") == plain


@pytest.mark.parametrize("stream", [False, True])
def test_a_repeated_request_is_answered_the_same(stream: bool) -> None:
    completion = answer(f"answer {ALL}")
    first = text(completion, stream=stream, input="hi", instructions=f"ref {ALL}")
    assert first == text(completion, stream=stream, input="hi", instructions=f"ref {ALL}")
    assert f"answer {ALL}" in json_texts(first)


@pytest.mark.parametrize("stream", [False, True])
def test_text_holding_the_other_placeholders_too(stream: bool) -> None:
    """The placeholders put in instead are themselves avoided (here the first other set)."""
    other = "@@mockoss-resp-1@@ @@mockoss-msg-1@@ 9087650011 9087650014"
    instructions = f"{ALL} {other}"
    reply = text(answer("Yes."), stream=stream, input="hi", instructions=instructions)
    assert instructions in json_texts(reply)
    plain = text(answer("Yes."), stream=stream, input="hi", instructions=NEUTRAL)
    assert reply.replace(instructions, NEUTRAL) == plain


# The bytes of ordinary replies as the code before this fix gave them (sha256 of body / joined frames).
GOLDEN = {
    ("answer", False): "d890a1546411040e55ff71a9f34d54499c9613edb3d6ea199fc7eed2a660ac16",
    ("answer", True): "db8ca5bff2bb2c560742739d0efd54f738bec4bad64986ba27de989b73956c32",
    ("tool", False): "a77fbe8304c61245f64d76b72146fb9924ade95e497c787ad8dc6c97169fcdfa",
    ("tool", True): "18de373d50e3a65994a67e6d295105e0357049850ef3ad1ddfbc7a0352f2bd66",
}


@pytest.mark.parametrize(("name", "stream"), list(GOLDEN))
def test_ordinary_replies_are_byte_identical_to_before(name: str, stream: bool) -> None:
    if name == "answer":
        reply = text(answer("Yes."), stream=stream, input="hi", instructions="Be brief.", max_output_tokens=50)
    else:
        reply = text(tool("<Paris>"), stream=stream, input="hi", tools=TOOLS)
    assert hashlib.sha256(reply.encode()).hexdigest() == GOLDEN[name, stream]
