"""HTTP behaviour a client relies on: errors, identity endpoints, determinism, per-request selection."""

import httpx
import openai
import pytest

MODEL = "openai/gpt-oss-20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
#: A chat request that declares the tool the scripted calls address.
CHAT_TOOLS = {**CHAT, "tools": WEATHER}


@pytest.fixture
def http(mockoss):
    with httpx.Client(base_url=mockoss.url, timeout=10) as client:
        yield client


def test_health_and_models(http):
    assert http.get("/health").status_code == 200
    models = http.get("/v1/models").json()
    assert models["object"] == "list"
    assert [(m["id"], m["object"], m["owned_by"]) for m in models["data"]] == [(MODEL, "model", "vllm")]
    assert models["data"][0]["max_model_len"] == 131072


def test_unknown_route_is_a_json_404(http):
    reply = http.get("/v1/nothing-here")
    assert reply.status_code == 404
    assert reply.json() == {"detail": "Not Found"}


def test_wrong_method_on_a_generation_path_is_a_json_405(http):
    reply = http.get("/v1/chat/completions")
    assert reply.status_code == 405
    assert reply.json() == {"detail": "Method Not Allowed"}
    assert http.post("/v1/not-a-route", json={}).status_code == 404


def test_invalid_json_is_a_400_error_body(mockoss, http):
    mockoss.use("clean-answer")
    reply = http.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "BadRequestError" and error["code"] == 400
    assert "not a JSON object" in error["message"]


def test_missing_field_is_a_400_naming_the_field(mockoss, http):
    mockoss.use("clean-answer")
    reply = http.post("/v1/chat/completions", json={"model": MODEL})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "messages"
    assert "messages: Field required" in reply.json()["error"]["message"]
    reply = http.post("/v1/responses", json={"model": MODEL, "input": "x", "max_output_tokens": 0})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "max_output_tokens"


def test_bad_request_does_not_consume_a_step(mockoss, http):
    mockoss.use("clean-tool-call")
    http.post("/v1/chat/completions", json={"model": MODEL})
    reply = http.post("/v1/chat/completions", json=CHAT_TOOLS)
    assert reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert [r.step for r in mockoss.requests] == [None, 0]


def test_tool_calls_are_dropped_when_the_request_declares_no_tools(mockoss, http):
    # vLLM: no tools ⇒ tool_choice "none" ⇒ parsed calls are dropped, not moved into content.
    mockoss.use("clean-tool-call")
    choice = http.post("/v1/chat/completions", json=CHAT).json()["choices"][0]
    assert "tool_calls" not in choice["message"]
    assert choice["message"]["content"] is None
    assert choice["message"]["reasoning"] == "Need to use function get_weather."
    assert choice["finish_reason"] == "stop"


def test_tool_choice_without_tools_is_rejected_as_vllm_does(mockoss, http):
    mockoss.use("clean-tool-call")
    reply = http.post("/v1/chat/completions", json={**CHAT, "tool_choice": "required"})
    assert reply.status_code == 400
    assert "When using `tool_choice`, `tools` must be set." in reply.json()["error"]["message"]
    named = {"type": "function", "function": {"name": "nope"}}
    reply = http.post("/v1/chat/completions", json={**CHAT_TOOLS, "tool_choice": named})
    assert reply.status_code == 400
    assert "Tool 'nope' has not been passed in `tools`." in reply.json()["error"]["message"]
    assert [r.step for r in mockoss.requests] == [None, None]


def test_unknown_model_is_vllms_404(mockoss):
    mockoss.use("clean-answer")
    with (
        openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client,
        pytest.raises(openai.NotFoundError) as info,
    ):
        client.chat.completions.create(model="gpt-4o", messages=CHAT["messages"])
    assert info.value.body == {
        "message": "The model `gpt-4o` does not exist.",
        "type": "NotFoundError",
        "param": "model",
        "code": 404,
    }


def test_missing_model_uses_the_served_model(mockoss, http):
    mockoss.use("clean-answer")
    reply = http.post("/v1/chat/completions", json={"messages": CHAT["messages"]})
    assert reply.status_code == 200 and reply.json()["model"] == MODEL


def test_fields_sdks_and_agents_send_are_accepted(mockoss, http):
    mockoss.use("clean-answer")
    body = {
        **CHAT,
        "store": False,
        "metadata": {"k": "v"},
        "parallel_tool_calls": True,
        "temperature": 0.2,
        "top_p": 1,
        "seed": 7,
        "stop": ["x"],
        "user": "u",
        "logprobs": False,
        "reasoning_effort": "low",
        "max_completion_tokens": 512,
        "service_tier": "auto",
        "prompt_cache_key": "k",
    }
    assert http.post("/v1/chat/completions", json=body).status_code == 200
    responses = {
        "model": MODEL,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "instructions": "Be brief.",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "high", "summary": "auto"},
        "parallel_tool_calls": False,
        "metadata": {"a": "b"},
        "max_output_tokens": 1000,
        "previous_response_id": None,
        "truncation": "disabled",
        "text": {"format": {"type": "text"}},
    }
    reply = http.post("/v1/responses", json=responses)
    assert reply.status_code == 200
    assert reply.json()["instructions"] == "Be brief."
    assert reply.json()["metadata"] == {"a": "b"}


def test_same_scenario_and_seed_give_byte_identical_output(mockoss, http):
    mockoss.use("clean-tool-call")
    first = [http.post("/v1/chat/completions", json=CHAT).content for _ in range(2)]
    stream_first = http.post("/v1/responses", json={"model": MODEL, "input": "x", "stream": True}).content
    mockoss.server.reset()
    second = [http.post("/v1/chat/completions", json=CHAT).content for _ in range(2)]
    stream_second = http.post("/v1/responses", json={"model": MODEL, "input": "x", "stream": True}).content
    assert first == second
    assert stream_first == stream_second
    assert first[0] != first[1]


def test_a_different_seed_changes_ids_only(mockoss, http):
    mockoss.use("clean-answer")
    one = http.post("/v1/chat/completions", json=CHAT).json()
    mockoss.server.reset()
    mockoss.server.seed = 1
    try:
        two = http.post("/v1/chat/completions", json=CHAT).json()
    finally:
        mockoss.server.seed = 0
    assert one["id"] != two["id"]
    assert one["choices"] == two["choices"]


def test_scenario_header_selects_per_request_with_its_own_cursor(mockoss, http):
    mockoss.use("clean-tool-call")
    headers = {"X-Mockoss-Scenario": "clean-answer"}
    reply = http.post("/v1/chat/completions", json=CHAT, headers=headers).json()
    assert reply["choices"][0]["message"]["content"] == "2 + 2 = 4."
    default = http.post("/v1/chat/completions", json=CHAT_TOOLS).json()
    assert default["choices"][0]["message"]["tool_calls"]
    assert [(r.scenario, r.step) for r in mockoss.requests] == [("clean-answer", 0), ("clean-tool-call", 0)]


def test_unknown_scenario_header_is_a_400_suggesting_names(mockoss, http):
    reply = http.post("/v1/chat/completions", json=CHAT, headers={"X-Mockoss-Scenario": "clean-answr"})
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert "unknown scenario 'clean-answr'" in message
    assert "did you mean 'clean-answer'?" in message and "--scenario-dir" in message


def test_no_scenario_selected_is_a_clear_400(mockoss, http):
    reply = http.post("/v1/chat/completions", json=CHAT)
    assert reply.status_code == 400
    assert "no scenario selected" in reply.json()["error"]["message"]


def test_switch_header_flips_a_behaviour_for_one_request(mockoss, http):
    mockoss.use("malformed-header-duplicate-recipient")
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200  # vLLM 0.32/0.33 skip the error
    reply = http.post("/v1/chat/completions", json=CHAT, headers={"X-Mockoss-Switch": "harmony_errors=raise"})
    assert reply.status_code == 500
    reply = http.post("/v1/chat/completions", json=CHAT, headers={"X-Mockoss-Switch": "harmony_errors=raise,harmony_error_status=400"})
    assert reply.status_code == 400
    bad = http.post("/v1/chat/completions", json=CHAT, headers={"X-Mockoss-Switch": "no_such_switch=1"})
    assert bad.status_code == 400
    assert "has no switch 'no_such_switch'" in bad.json()["error"]["message"]


@pytest.mark.mockoss(assert_all_requests_were_expected=False)  # the exhausted error is what this test checks
def test_scripted_error_with_retry_after_and_exhaustion(mockoss, http):
    mockoss.use(
        {
            "when_exhausted": "error",
            "steps": [{"error": {"status": 429, "message": "Slow down", "retry_after": 3}}],
        }
    )
    first = http.post("/v1/chat/completions", json=CHAT)
    assert first.status_code == 429
    assert first.headers["retry-after"] == "3"
    assert first.json()["error"] == {"message": "Slow down", "type": "TooManyRequestsError", "param": None, "code": 429}
    second = http.post("/v1/chat/completions", json=CHAT)
    assert second.status_code == 500
    assert "scenario exhausted" in second.json()["error"]["message"]


def test_repeat_last_after_the_final_step(mockoss, http):
    mockoss.use("clean-tool-call")
    contents = [http.post("/v1/chat/completions", json=CHAT).json()["choices"][0]["message"]["content"] for _ in range(4)]
    assert contents[1:] == ["It is sunny in San Francisco at 20 °C."] * 3


def test_admin_endpoints_reset_and_list_requests(mockoss, http):
    mockoss.use("clean-tool-call")
    http.post("/v1/chat/completions", json=CHAT)
    log = http.get("/mockoss/requests").json()
    assert [(e["endpoint"], e["scenario"], e["step"], e["status"]) for e in log] == [("chat", "clean-tool-call", 0, 200)]
    assert log[0]["completion"].endswith("<|call|>")
    assert http.post("/mockoss/reset").status_code == 204
    assert http.get("/mockoss/requests").json() == []
    again = http.post("/v1/chat/completions", json=CHAT_TOOLS).json()
    assert again["choices"][0]["message"]["tool_calls"]
