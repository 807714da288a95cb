"""SGLang chat prompt count: the t18 fuzz findings F5, F7 and F8 (/tmp/team/t18_fuzz_report.md).

* F5: the chat template's count encodes a long text through
  :data:`mockoss.harmony.encoding.ENCODE_ELSEWHERE` (the HTTP layer's prompt worker process) when
  it is set, and the count made before the server lock is found again by the surface on the same
  thread although other requests were counted meanwhile (:mod:`mockoss.profiles.sglang.template`).
* F7: a ``chat_template_kwargs`` key the template never reads keeps the summed count (no whole
  render), with the same count.
* F8: tool-call ``arguments`` nested deeper than Python's recursion limit get SGLang's 400:
  sgl-project/sglang v0.5.23 ``serving_chat.py:181`` ``parse_tool_call_arguments`` parses with
  ``orjson.loads`` (1,024 levels: checked with orjson 3.13.0 in SGLang 0.5.23's environment), and
  SGLang's own serving code (``tools/goldens/sglang_serving_engine.py``) answered these very
  messages at depths 900, 1,000, 1,024, 1,025 and 3,000 (session 18). An *object* nested 1,000
  levels is SGLang's 500 there (its render's ``RecursionError``); mockoss keeps its fallback count.
"""

from __future__ import annotations

import json
import threading

import pytest

from mockoss.harmony.encoding import ENCODE_ELSEWHERE, load_encoding
from mockoss.profiles.sglang import template
from mockoss.profiles.sglang.chat import chat_prompt_tokens
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"


def _body(content: str, **extra: object) -> dict[str, object]:
    return {"model": MODEL, "messages": [{"role": "user", "content": content}], **extra}


def test_long_text_encoded_elsewhere() -> None:
    word = "a" * 30_000
    expected = chat_prompt_tokens(_body(word), -1)
    sent: list[str] = []

    def elsewhere(text: str, special: bool) -> list[int]:
        sent.append(text)
        return list(load_encoding().encode(text, allowed_special="all" if special else ()))

    token = ENCODE_ELSEWHERE.set(elsewhere)
    try:
        assert chat_prompt_tokens(_body(word + " "), -1) == expected + 1
    finally:
        ENCODE_ELSEWHERE.reset(token)
    assert any(word in text for text in sent)
    assert all(len(text) >= template.ELSEWHERE_CHARS for text in sent)


def test_count_found_again_after_other_threads_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _body("the request counted before the lock")
    counted = template.template_count(body)
    other = threading.Thread(target=lambda: template.template_count(_body("a small request meanwhile")))
    other.start()
    other.join()

    def render_again(_body: object) -> int:
        raise AssertionError("counted again")

    monkeypatch.setattr(template, "_render_count", render_again)
    assert template.template_count(body) == counted


def _conversation(rounds: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": json.dumps({"i": i})}}
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}"},
        ]
    return messages


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {"type": "object", "properties": {"i": {"type": "integer"}}},
        },
    }
]


def test_unread_template_kwarg_keeps_the_summed_count(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = {"model": MODEL, "messages": _conversation(20), "tools": TOOLS}
    whole = template.text_count(template.render_prompt({**plain, "chat_template_kwargs": {"foo": 1}})[0])

    def no_whole_render(_body: object) -> tuple[str, None]:
        raise AssertionError("rendered whole")

    monkeypatch.setattr(template, "render_prompt", no_whole_render)
    assert chat_prompt_tokens({**plain, "chat_template_kwargs": {"foo": 1}}, -1) == whole
    assert chat_prompt_tokens(plain, -1) == whole
    assert "foo" not in template.template_variables()


def test_read_names_include_the_template_globals() -> None:
    read = template.template_variables()
    assert {
        "messages",
        "tools",
        "reasoning_effort",
        "model_identity",
        "raise_exception",
        "strftime_now",
        "namespace",
    } <= read


@pytest.mark.parametrize(
    ("depth", "message"),
    [
        (900, "must be a JSON object."),
        (1000, "must be a JSON object."),
        (1024, "must be a JSON object."),
        (1025, "must be valid JSON."),
        (3000, "must be valid JSON."),
    ],
)
def test_deep_arguments_get_sglangs_400(depth: int, message: str) -> None:
    server = MockServer(profile="sglang", scenario="clean-answer")
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[" * depth + "]" * depth}}
    body = {
        "model": MODEL,
        "stream": False,
        "messages": [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "user", "content": "x"}],
    }
    reply = server.handle("chat", json.dumps(body).encode(), {})
    assert reply.status == 400
    assert json.loads(bytes(reply.body))["message"] == "Assistant tool call function.arguments " + message


def test_deep_arguments_never_raise_the_interpreters_recursion_limit(monkeypatch):
    """``sys.setrecursionlimit`` is the whole interpreter's: raised for one parse, every other
    thread (the core's body parse, other profiles' counts) parsed deeper meanwhile, so a
    1,500-level body was answered by timing (final review, session 18)."""
    import sys

    from mockoss.profiles.sglang.orjson_depth import loads_deep

    def refuse(limit):
        raise AssertionError(f"setrecursionlimit({limit})")

    monkeypatch.setattr(sys, "setrecursionlimit", refuse)
    assert loads_deep("[" * 1010 + "]" * 1010, float) == []
    with pytest.raises(ValueError, match="depth limit"):
        loads_deep("[" * 1025 + "]" * 1025, float)
    with pytest.raises(RecursionError):
        loads_deep('{"a":' * 1010 + "1" + "}" * 1010, float)
