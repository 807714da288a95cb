"""llama-server's refusals before generating, over HTTP: they play no scripted step, and the
launch builds' content-markup check is on the llamacpp timeline (a review of 295be01..509ac3c).

* A refused request (the chat template's 500, the message checks' 400s) used to play the scripted
  step it drew, so the next good request got the step after it; the openai SDK retries a 500 twice
  (``max_retries=2``, openai-python ``_base_client.py`` ``_should_retry``), so one bad history used
  up three steps though llama-server generated nothing (``oaicompat_chat_params_parse`` and the
  template run before a task starts, ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp).
  Now :meth:`LlamacppProfile.request_refusal` answers before the server core draws a step.
* ``template_channel_check`` (the template's check for Harmony markup in an assistant ``content``)
  was off for every release, though ``llamacpp@b6100`` is the launch build of
  ggml-org/llama.cpp#15091, the report of that very 500, and predates the patch that removed it
  (PR #15243, commit fba5c0d6, 2025-08-11). It changes at b6301 (2025-08-27, a build after the
  patch: luncliff/vcpkg-registry#433 links the release).
* The shipped scenario ``markup-in-content-with-reasoning-format-none`` promises that 500 when the
  client sends the content back: it pins the launch builds' check.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from starlette.testclient import TestClient

from mockoss import steps
from mockoss.profiles.llamacpp.template_checks import CHANNEL_IN_CONTENT, CHANNEL_IN_THINKING, error_text
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "ggml-org/gpt-oss-20b-GGUF"
USER = {"role": "user", "content": "weather?"}
ORPHAN = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}  # no assistant tool call before it
MARKUP = "<|channel|>analysis<|message|>thinking<|end|>"
SCRIPT = steps.script(steps.final("zero"), steps.final("one"), steps.final("two"), steps.final("three"))


def client(server: MockServer) -> TestClient:
    return TestClient(create_app(server), base_url="http://127.0.0.1:8080")


def send(http: TestClient, path: str, body: dict[str, Any], **headers: str) -> tuple[int, Any]:
    reply = http.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json", **headers})
    return reply.status_code, reply.json()


def chat_text(reply: Any) -> str:
    return reply["choices"][0]["message"]["content"]


def steps_played(server: MockServer) -> list[tuple[int, int | None, int]]:
    return [(r.index, r.step, r.status) for r in server.requests]


# ------------------------------------------------------------------ no step for a refusal


@pytest.mark.parametrize(
    "bad",
    [
        [USER, ORPHAN],  # the template's 500
        [USER, {"role": "assistant", "content": "Hi", "reasoning_content": MARKUP}, USER],  # the thinking 500
        [USER, {"role": "assistant"}],  # the message check's 400 (no content, no tool_calls)
    ],
)
def test_a_refused_chat_request_plays_no_step(bad: list[dict[str, Any]]) -> None:
    """On 925a315 the refusal played step 0 and the good request got 'one'."""
    server = MockServer(scenario=SCRIPT, profile="llamacpp")
    with client(server) as http:
        status, _ = send(http, "/v1/chat/completions", {"model": MODEL, "messages": bad})
        assert status in (400, 500)
        status, reply = send(http, "/v1/chat/completions", {"model": MODEL, "messages": [USER]})
    assert (status, chat_text(reply)) == (200, "zero")
    # The refusal still takes a request index (ids come from it, as for every refused request).
    assert steps_played(server) == [(0, None, status_of(bad)), (1, 0, 200)]


def status_of(messages: list[dict[str, Any]]) -> int:
    return 400 if messages[-1] == {"role": "assistant"} else 500


def test_a_refused_responses_request_plays_no_step() -> None:
    server = MockServer(scenario=SCRIPT, profile="llamacpp")
    orphan = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    with client(server) as http:
        assert send(http, "/v1/responses", {"model": MODEL, "input": [USER, orphan]})[0] == 500
        assert send(http, "/v1/responses", {"model": MODEL, "input": "hi", "previous_response_id": "resp_1"})[0] == 400
        status, reply = send(http, "/v1/responses", {"model": MODEL, "input": "hi"})
    assert status == 200 and reply["output"][-1]["content"][0]["text"] == "zero"
    assert [step for _, step, _ in steps_played(server)] == [None, None, 0]


def test_the_openai_sdk_retries_of_a_template_500_use_up_no_steps() -> None:
    """One bad history is three requests with the SDK's default retries: on 925a315 the good
    request after them got 'three'."""
    server = MockServer(scenario=SCRIPT, profile="llamacpp")
    with client(server) as http:
        sdk = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:8080/v1", http_client=http, max_retries=2)
        with pytest.raises(openai.InternalServerError, match="Message has tool role"):
            sdk.chat.completions.create(model=MODEL, messages=[USER, ORPHAN])  # type: ignore[list-item]
        answer = sdk.chat.completions.create(model=MODEL, messages=[USER])  # type: ignore[list-item]
    assert answer.choices[0].message.content == "zero"
    assert steps_played(server) == [(0, None, 500), (1, None, 500), (2, None, 500), (3, 0, 200)]


def test_the_request_switches_decide_the_refusal_before_the_step() -> None:
    """The refusal is judged under the request's own profile (here its X-Mockoss-Switch), as the
    reply is: the 2025 handler gave ``thinking`` only beside tool calls, so no refusal."""
    server = MockServer(scenario=SCRIPT, profile="llamacpp")
    marked = [USER, {"role": "assistant", "content": "Hi", "reasoning_content": MARKUP}, USER]
    with client(server) as http:
        status, reply = send(
            http,
            "/v1/chat/completions",
            {"model": MODEL, "messages": marked},
            **{"x-mockoss-switch": "thinking_field=with_tool_calls"},
        )
        assert (status, chat_text(reply)) == (200, "zero")
        status, reply = send(http, "/v1/chat/completions", {"model": MODEL, "messages": marked})
    expected = {"error": {"code": 500, "message": error_text(CHANNEL_IN_THINKING, "jinja"), "type": "server_error"}}
    assert (status, reply) == (500, expected)


# ------------------------------------------------------------------ the content check on the timeline


def echo(profile: str, **headers: str) -> tuple[int, Any]:
    echoed = {"role": "assistant", "content": MARKUP + "Hello"}
    with client(MockServer(scenario="clean-answer", profile=profile)) as http:
        return send(http, "/v1/chat/completions", {"model": MODEL, "messages": [USER, echoed, USER]}, **headers)


def minja_refusal(message: str) -> dict[str, Any]:
    return {"error": {"code": 500, "message": message, "type": "server_error"}}


def test_the_launch_builds_refuse_markup_sent_back_in_content() -> None:
    """ggml-org/llama.cpp#15091 (b6100's era): 500 and minja's words; 200 on 925a315."""
    assert echo("llamacpp@b6100") == (500, minja_refusal(CHANNEL_IN_CONTENT.message))
    assert echo("llamacpp@b6300") == (500, minja_refusal(CHANNEL_IN_CONTENT.message))
    assert echo("llamacpp@b6301")[0] == 200  # PR #15243's patch
    assert echo("llamacpp")[0] == 200


# ------------------------------------------------------------------ the shipped scenario


@pytest.mark.parametrize("profile", ["llamacpp", "llamacpp@b6100", "llamacpp@b9553"])
def test_the_markup_scenario_refuses_its_content_sent_back(profile: str) -> None:
    """Its comment promises the launch builds' 500 on the next turn: 200 on 925a315."""
    server = MockServer(scenario="markup-in-content-with-reasoning-format-none", profile=profile)
    first = {"model": MODEL, "messages": [USER]}
    with client(server) as http:
        status, reply = send(http, "/v1/chat/completions", first)
        content = chat_text(reply)
        assert status == 200 and content.startswith("<|channel|>analysis<|message|>")
        again = {"model": MODEL, "messages": [USER, {"role": "assistant", "content": content}, USER]}
        assert send(http, "/v1/chat/completions", again) == (500, minja_refusal(CHANNEL_IN_CONTENT.message))
        # the later builds, by the request's switch
        later = send(http, "/v1/chat/completions", again, **{"x-mockoss-switch": "template_channel_check=false"})
    assert later[0] == 200 and chat_text(later[1]) == content


# ------------------------------------------------------------------ Responses input (responses_input's docstring)


def test_markup_in_an_assistant_message_item_is_the_content_refusal_where_the_check_is_on() -> None:
    item = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": MARKUP + "Hi"}]}
    body = {"model": MODEL, "input": [USER, item, USER]}
    with client(MockServer(scenario="clean-answer", profile="llamacpp@b6100")) as http:
        assert send(http, "/v1/responses", body) == (500, minja_refusal(CHANNEL_IN_CONTENT.message))
    with client(MockServer(scenario="clean-answer", profile="llamacpp")) as http:
        assert send(http, "/v1/responses", body)[0] == 200


def test_a_request_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core's check before the step is not repeated when the reply is made (~0.5 ms for a
    401-message history)."""
    from mockoss.profiles import llamacpp

    calls: list[str] = []
    real_checked, real_refusal = llamacpp.checked, llamacpp._refusal
    monkeypatch.setattr(llamacpp, "checked", lambda *args: calls.append(args[1]) or real_checked(*args))
    monkeypatch.setattr(llamacpp, "_refusal", lambda *args: calls.append(args[1]) or real_refusal(*args))
    server = MockServer(scenario=SCRIPT, profile="llamacpp")
    with client(server) as http:
        assert send(http, "/v1/chat/completions", {"model": MODEL, "messages": [USER]})[0] == 200
        assert send(http, "/v1/responses", {"model": MODEL, "input": "hi"})[0] == 200
    assert calls == ["chat", "responses"]
