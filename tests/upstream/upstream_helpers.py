"""Shared pieces of the upstream tests: a second mockoss plays the real server."""

from __future__ import annotations

import contextlib
import socket

import httpx

from mockoss.scenario.loader import scenario_from_data
from mockoss.server.run import ThreadedServer

MODEL = "openai/gpt-oss-20b"
#: What "the model" says, with a `{{` that must survive recording as literal text.
RAW = (
    "<|channel|>analysis<|message|>The user greets. Reply with {{ braces }} kept.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Hello! How can I help?<|return|>"
)
CALL_RAW = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Tokyo"}<|call|>'
)
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi there"}]}
RESPONSES = {"model": MODEL, "input": "Hi there"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def escaped(raw: str) -> str:
    """``raw`` as a scenario's ``raw:`` (templates escaped)."""
    return raw.replace("{{", '{{ "{{" }}')


def scenario(*steps: dict, name: str = "upstream"):
    return scenario_from_data({"steps": list(steps)}, name=name, default_version=True)


def completion_step(raw: str = RAW, **extra: object) -> dict:
    return {"completion": {"raw": escaped(raw)}, **extra}


def dead_url() -> str:
    """A loopback URL nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def post(client: httpx.Client, url: str, path: str, body: dict, **headers: str) -> httpx.Response:
    return client.post(url + path, json=body, headers=headers)


def stream_bytes(client: httpx.Client, url: str, path: str, body: dict) -> bytes:
    """The whole body of a streamed answer, as received (raises if the connection breaks)."""
    with client.stream("POST", url + path, json=body) as response:
        return b"".join(response.iter_raw())


@contextlib.contextmanager
def stopped(running: ThreadedServer):
    """Stop ``running`` on exit (its in-flight exchanges end first), then close its recorder."""
    try:
        yield running
    finally:
        running.stop()
        if running.server.recorder is not None:
            running.server.recorder.close()
