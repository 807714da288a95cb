"""What the templated-step tests (``test_template_offload.py``, ``test_template_predict.py``)
share: a long echo, a chat body, a watch on the rendered completions built, and a request through
the off-loop gate."""

from __future__ import annotations

import json
import threading

import pytest

from mockoss.scenario import render as render_module
from mockoss.scenario import template as template_module
from mockoss.server.core import MockServer
from mockoss.server.offload import Gate

ECHO = "echo: {{ request.messages[-1].content }}"
WORDS = " ".join(f"w{i % 997}" for i in range(20_000))  # ~100 KB, no long unbroken run


def chat(server: MockServer, content: str, **fields) -> bytes:
    model = server.info.served_model_names[0]
    return json.dumps({"model": model, "messages": [{"role": "user", "content": content}], **fields}).encode()


def watch_builds(monkeypatch: pytest.MonkeyPatch, server: MockServer, builds: list) -> None:
    """Note (thread id, server lock held, characters) for every rendered completion built."""
    real = render_module._build

    def build(*args):  # the real one's arguments, whatever they are (messages, fault, positions)
        built = real(*args)
        builds.append((threading.get_ident(), server._lock.locked(), len(built.text)))
        return built

    monkeypatch.setattr(render_module, "_build", build)


async def through_gate(gate: Gate, server: MockServer, raw: bytes):
    reply, _delivery = await gate.respond(server, "chat", raw, {})
    return reply, threading.get_ident()


def allow_long_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Raise the cap on a rendered text so that a ~100 KB echo renders."""
    monkeypatch.setattr(template_module, "MAX_RENDERED_CHARS", 400_000)
