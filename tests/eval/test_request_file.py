"""`mockoss.eval.run`: reading the request file and inferring its endpoint."""

import pytest

from mockoss.endpoints import ENDPOINTS
from mockoss.eval.run import PATHS, EvalRequest, RequestFileError, load_request, request_from_data


def test_paths_agree_with_the_endpoint_registry():
    assert set(PATHS) == {"chat", "responses"}
    assert {name: "/v1" + path for name, path in PATHS.items()} == {name: ENDPOINTS[name].path for name in PATHS}


@pytest.mark.parametrize(
    ("data", "endpoint"),
    [
        ({"endpoint": "chat", "body": {"messages": []}}, "chat"),
        ({"endpoint": "responses", "body": {"input": "hi"}}, "responses"),
        ({"input": "hi", "model": "m"}, "responses"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "chat"),
    ],
)
def test_endpoint_given_or_inferred(data, endpoint):
    request = request_from_data(data)
    assert request.endpoint == endpoint
    assert request.body == data.get("body", data)


def test_url_and_stream():
    request = EvalRequest("chat", {"messages": [], "stream": True})
    assert request.url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1/chat/completions"
    assert request.stream
    assert not EvalRequest("responses", {"input": "x", "stream": "yes"}).stream


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1], "r.json: expected a JSON object (a request body, or {endpoint, body})"),
        ({"endpoint": "completions", "body": {}}, "r.json: endpoint: expected one of 'chat', 'responses', got 'completions'"),
        ({"endpoint": "chat", "body": []}, "r.json: body: expected the request body as an object"),
        ({"model": "m"}, ("r.json: cannot tell the endpoint: give 'endpoint' (chat or responses) and 'body', or a body "
                          "with 'input' (Responses) or 'messages' (Chat Completions)")),
        ({"input": "x", "messages": []}, ("r.json: cannot tell the endpoint: give 'endpoint' (chat or responses) and "
                                          "'body', or a body with 'input' (Responses) or 'messages' (Chat Completions)")),
    ],
)
def test_request_errors(data, message):
    with pytest.raises(RequestFileError) as info:
        request_from_data(data, "r.json")
    assert str(info.value) == message


def test_load_json_and_yaml(tmp_path):
    (tmp_path / "r.json").write_text('{"input": "What time is it?", "stream": true}')
    (tmp_path / "r.yaml").write_text("endpoint: chat\nbody:\n  messages:\n    - {role: user, content: hi}\n")
    assert load_request(tmp_path / "r.json") == EvalRequest("responses", {"input": "What time is it?", "stream": True})
    assert load_request(tmp_path / "r.yaml") == EvalRequest("chat", {"messages": [{"role": "user", "content": "hi"}]})


def test_load_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(RequestFileError, match=r"^.*missing\.json: cannot read: No such file or directory$"):
        load_request(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"input": "x",\n  "stream": [}\n')
    with pytest.raises(RequestFileError) as info:
        load_request(bad)
    assert str(info.value).startswith(f"{bad}:2: not valid JSON or YAML: ")
