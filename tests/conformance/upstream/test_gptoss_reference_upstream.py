"""The gpt-oss reference server's own tests, converted: ``tests/test_api_endpoints.py`` and
``tests/test_responses_api.py`` at openai/gpt-oss@7b583341fe16729127f6d5b94a7b09ccae97e1a1.

Upstream, every test posts to ``create_api_server(...)`` through FastAPI's ``TestClient`` with a
backend that returns the tokens of ``<|channel|>final<|message|>Test response<|return|>`` (``Hey
there`` in test_responses_api.py) for every request (``tests/conftest.py``, ``mock_infer_token``).
Here the same requests go over HTTP to the ``gptoss-reference`` profile with a scenario that
answers that completion to every request, and each upstream assertion is kept. All 22 upstream
tests pass against the real server in a scratch venv (openai-harmony 0.0.8, the repository's
source); the tally here counts how many the profile reproduces.

One upstream assertion is not carried over: ``test_response_time_under_threshold`` also asserts
that a request takes under 5 s. mockoss keeps speed targets in benchmarks, not timed tests, so
the case keeps its status check only (its name says so).

The other tests of the repository (``tests/gpt_oss/tools/simple_browser/test_backend.py``) test
the browser tool's search backends, not the server: left out.
"""

from __future__ import annotations

import json

import httpx
import pytest

SERVER = "gptoss-reference"
SRC = "openai/gpt-oss@7b583341fe16729127f6d5b94a7b09ccae97e1a1"
ENDPOINTS = f"{SRC}:tests/test_api_endpoints.py"
RESPONSES_API = f"{SRC}:tests/test_responses_api.py"

pytestmark = pytest.mark.mockoss(profile=SERVER)


def upstream(source: str, test: str) -> pytest.MarkDecorator:
    return pytest.mark.upstream(SERVER, f"{source}::{test}")


def _answer_always(mockoss, text: str) -> None:
    mockoss.use({"when_exhausted": "repeat_last", "steps": [{"completion": {"raw": f"<|channel|>final<|message|>{text}<|return|>"}}]})


@pytest.fixture
def api_client(mockoss):
    """conftest.py's ``api_client``: every request is answered ``Test response``."""
    _answer_always(mockoss, "Test response")
    with httpx.Client(base_url=mockoss.url, timeout=30) as client:
        yield client


@pytest.fixture
def sample_request_data():
    """conftest.py's ``sample_request_data``, as upstream (``reasoning_effort`` is not a field of
    ``ResponsesRequest``: pydantic ignores it)."""
    return {"model": "gpt-oss-120b", "input": "Hello, how can I help you today?", "stream": False,
            "reasoning_effort": "low", "temperature": 0.7, "tools": []}


# -- TestResponsesEndpoint ---------------------------------------------------------------------


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_basic_response_creation")
def test_basic_response_creation(api_client, sample_request_data):
    response = api_client.post("/v1/responses", json=sample_request_data)
    assert response.status_code == 200
    data = response.json()
    assert "id" in data
    assert data["object"] == "response"
    assert data["model"] == sample_request_data["model"]


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_high_reasoning")
def test_response_with_high_reasoning(api_client, sample_request_data):
    sample_request_data["reasoning_effort"] = "high"
    response = api_client.post("/v1/responses", json=sample_request_data)
    assert response.status_code == 200
    assert "id" in response.json() and response.json()["status"] == "completed"


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_medium_reasoning")
def test_response_with_medium_reasoning(api_client, sample_request_data):
    sample_request_data["reasoning_effort"] = "medium"
    response = api_client.post("/v1/responses", json=sample_request_data)
    assert response.status_code == 200
    assert "id" in response.json() and response.json()["status"] == "completed"


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_invalid_model")
def test_response_with_invalid_model(api_client, sample_request_data):
    sample_request_data["model"] = "invalid-model"
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_empty_input")
def test_response_with_empty_input(api_client, sample_request_data):
    sample_request_data["input"] = ""
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_tools")
def test_response_with_tools(api_client, sample_request_data):
    sample_request_data["tools"] = [{"type": "browser_search"}]
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_response_with_custom_temperature")
def test_response_with_custom_temperature(api_client, sample_request_data):
    for temp in [0.0, 0.5, 1.0, 1.5, 2.0]:
        sample_request_data["temperature"] = temp
        response = api_client.post("/v1/responses", json=sample_request_data)
        assert response.status_code == 200
        assert "usage" in response.json()


@upstream(ENDPOINTS, "TestResponsesEndpoint::test_streaming_response")
def test_streaming_response(api_client, sample_request_data):
    sample_request_data["stream"] = True
    parsed = 0
    with api_client.stream("POST", "/v1/responses", json=sample_request_data) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line and line.startswith("data: "):
                event_data = line[6:]
                if event_data != "[DONE]":
                    json.loads(event_data)
                    parsed += 1
                    break
    assert parsed == 1  # upstream breaks after the first data line; it must have seen one


# -- TestResponsesWithSession ------------------------------------------------------------------


@upstream(ENDPOINTS, "TestResponsesWithSession::test_response_with_session_id")
def test_response_with_session_id(api_client, sample_request_data):
    sample_request_data["session_id"] = "test-session-123"
    response1 = api_client.post("/v1/responses", json=sample_request_data)
    assert response1.status_code == 200
    sample_request_data["input"] = "Follow up question"
    response2 = api_client.post("/v1/responses", json=sample_request_data)
    assert response2.status_code == 200
    assert response1.json()["id"] != response2.json()["id"]


@upstream(ENDPOINTS, "TestResponsesWithSession::test_response_continuation")
def test_response_continuation(api_client, sample_request_data):
    response1 = api_client.post("/v1/responses", json=sample_request_data)
    assert response1.status_code == 200
    continuation = {"model": sample_request_data["model"], "response_id": response1.json()["id"], "input": "Continue the previous thought"}
    assert api_client.post("/v1/responses", json=continuation).status_code == 200


# -- TestErrorHandling -------------------------------------------------------------------------


@upstream(ENDPOINTS, "TestErrorHandling::test_missing_required_fields")
def test_missing_required_fields(api_client):
    assert api_client.post("/v1/responses", json={}).status_code == 422


@upstream(ENDPOINTS, "TestErrorHandling::test_invalid_reasoning_effort")
def test_invalid_reasoning_effort(api_client, sample_request_data):
    sample_request_data["reasoning_effort"] = "invalid"
    assert api_client.post("/v1/responses", json=sample_request_data).status_code in (200, 422)


@upstream(ENDPOINTS, "TestErrorHandling::test_malformed_json")
def test_malformed_json(api_client):
    response = api_client.post("/v1/responses", content="not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 422


@upstream(ENDPOINTS, "TestErrorHandling::test_extremely_long_input")
def test_extremely_long_input(api_client, sample_request_data):
    sample_request_data["input"] = "x" * 100000
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


# -- TestToolIntegration -----------------------------------------------------------------------

_FUNCTION = {"type": "function", "name": "test_function", "parameters": {"type": "object", "properties": {}}, "description": "Test function"}


@upstream(ENDPOINTS, "TestToolIntegration::test_browser_search_tool")
def test_browser_search_tool(api_client, sample_request_data):
    sample_request_data["tools"] = [{"type": "browser_search"}]
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestToolIntegration::test_function_tool_integration")
def test_function_tool_integration(api_client, sample_request_data):
    sample_request_data["tools"] = [_FUNCTION]
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestToolIntegration::test_multiple_tools")
def test_multiple_tools(api_client, sample_request_data):
    sample_request_data["tools"] = [{"type": "browser_search"}, _FUNCTION]
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


# -- TestPerformance ---------------------------------------------------------------------------


@upstream(ENDPOINTS, "TestPerformance::test_response_time_under_threshold")
def test_response_time_under_threshold_status_only(api_client, sample_request_data):
    # Upstream also asserts elapsed < 5.0 s; not carried over (module docstring).
    assert api_client.post("/v1/responses", json=sample_request_data).status_code == 200


@upstream(ENDPOINTS, "TestPerformance::test_multiple_sequential_requests")
def test_multiple_sequential_requests(api_client, sample_request_data):
    for i in range(3):
        data = {**sample_request_data, "input": f"Request {i}"}
        assert api_client.post("/v1/responses", json=data).status_code == 200


# -- TestUsageTracking -------------------------------------------------------------------------


@upstream(ENDPOINTS, "TestUsageTracking::test_usage_object_structure")
def test_usage_object_structure(api_client, sample_request_data):
    response = api_client.post("/v1/responses", json=sample_request_data)
    assert response.status_code == 200
    usage = response.json()["usage"]
    assert {"input_tokens", "output_tokens", "total_tokens"} <= set(usage)
    assert usage["input_tokens"] >= 0 and usage["output_tokens"] >= 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


@upstream(ENDPOINTS, "TestUsageTracking::test_usage_increases_with_longer_input")
def test_usage_increases_with_longer_input(api_client, sample_request_data):
    usage1 = api_client.post("/v1/responses", json=sample_request_data).json()["usage"]
    sample_request_data["input"] = sample_request_data["input"] * 10
    usage2 = api_client.post("/v1/responses", json=sample_request_data).json()["usage"]
    assert usage2["input_tokens"] > usage1["input_tokens"]


# -- tests/test_responses_api.py ---------------------------------------------------------------


@upstream(RESPONSES_API, "test_health_check")
def test_health_check(mockoss):
    _answer_always(mockoss, "Hey there")
    with httpx.Client(base_url=mockoss.url, timeout=30) as client:
        response = client.post("/v1/responses", json={"model": "gpt-oss-120b", "input": "Hello, world!"})
    assert response.status_code == 200
