"""The ollama profile's identity routes and route errors, through ``MockServer.probe``."""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

GO_JSON = ("content-type", "application/json; charset=utf-8")


@pytest.fixture(scope="module")
def server() -> MockServer:
    return MockServer(
        scenario="clean-answer", profile="ollama", served_model_names=["gpt-oss:20b", "team/gpt-oss:120b"]
    )


def test_root_says_ollama_is_running(server):
    for method in ("GET", "HEAD"):
        reply = server.probe(method, "/")
        assert (reply.status, reply.body, reply.headers) == (
            200,
            b"Ollama is running",
            (("content-type", "text/plain; charset=utf-8"),),
        )


def test_version_is_a_switch():
    assert MockServer(profile="ollama").probe("GET", "/api/version").body == b'{"version":"0.33.0-rc2"}'
    custom = MockServer(profile="ollama", switches={"version": "0.11.3"})
    assert custom.probe("HEAD", "/api/version").body == b'{"version":"0.11.3"}'


def test_tags_list_every_served_model(server):
    reply = server.probe("GET", "/api/tags")
    assert GO_JSON in reply.headers
    models = json.loads(reply.body)["models"]
    assert [(m["name"], m["model"], m["modified_at"]) for m in models] == [
        ("gpt-oss:20b", "gpt-oss:20b", "2026-01-01T00:00:00Z"),
        ("team/gpt-oss:120b", "team/gpt-oss:120b", "2026-01-01T00:00:00Z"),
    ]
    assert models[0]["details"] == {
        "parent_model": "",
        "format": "gguf",
        "family": "gptoss",
        "families": ["gptoss"],
        "parameter_size": "20.9B",
        "quantization_level": "MXFP4",
        "context_length": 131072,
    }
    assert models[0]["capabilities"] == ["completion", "tools", "thinking"]


def test_show_describes_a_gpt_oss_model(server):
    body = json.loads(server.probe("POST", "/api/show").body)
    assert (body["model_info"]["general.architecture"], body["capabilities"]) == (
        "gptoss",
        ["completion", "tools", "thinking"],
    )


def test_openai_model_list_has_namespaces_as_owners(server):
    reply = server.probe("GET", "/v1/models")
    assert reply.body == (
        b'{"object":"list","data":[{"id":"gpt-oss:20b","object":"model","created":1767225600,"owned_by":"library"},'
        b'{"id":"team/gpt-oss:120b","object":"model","created":1767225600,"owned_by":"team"}]}\n'
    )


def test_openai_model_retrieve_and_not_found(server):
    assert json.loads(server.probe("GET", "/v1/models/gpt-oss:20b").body)["id"] == "gpt-oss:20b"
    missing = server.probe("GET", "/v1/models/gpt-oss")
    assert (missing.status, missing.body) == (
        404,
        b'{"error":{"message":"model \'gpt-oss:latest\' not found","type":"not_found_error","param":null,"code":null}}\n',
    )


@pytest.mark.parametrize(
    ("method", "path", "status", "text", "allow"),
    [
        ("GET", "/api/nothing", 404, "404 page not found", None),
        ("POST", "/v1/nothing", 404, "404 page not found", None),
        ("GET", "/api/chat", 405, "405 method not allowed", "POST"),
        ("POST", "/", 405, "405 method not allowed", "HEAD, GET"),
        ("DELETE", "/api/tags", 405, "405 method not allowed", "HEAD, GET"),
        ("GET", "/health", 404, "404 page not found", None),
    ],
)
def test_route_errors_are_gins(server, method, path, status, text, allow):
    reply = server.probe(method, path)
    assert (reply.status, reply.body.decode()) == (status, text)
    headers = dict(reply.headers)
    assert headers["content-type"] == "text/plain"
    assert headers.get("allow") == allow
