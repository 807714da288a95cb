"""The 400s of mockoss's own limits say how to raise them, for a ``mockoss serve`` user too:
the reply bound (``--max-reply-bytes``) and the template bound (``--max-template-chars``) named
only their module constants, which a served fake's user (any language) cannot set; the tool-check
budget's warning already names ``--tool-check-budget-ms`` and the monkeypatch."""

from __future__ import annotations

import json

from mockoss.profiles import reply_limit
from mockoss.scenario import template
from mockoss.server.core import MockServer


def test_the_reply_bound_names_its_serve_flag_and_its_constant(monkeypatch):
    monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", 300)
    for profile in ("vllm", "trtllm"):
        server = MockServer("clean-answer", profile=profile)
        reply, _ = server.respond("completions", json.dumps({"model": "openai/gpt-oss-20b", "prompt": ["a", "b", "c"]}).encode(), {})
        assert reply.status == 400
        message = json.loads(reply.body)["error"]["message"] if profile == "vllm" else json.loads(reply.body)["message"]
        assert "MAX_REPLY_BYTES" in message and "mockoss serve --max-reply-bytes" in message, message


def test_the_template_bound_names_its_serve_flag_and_its_constant(monkeypatch):
    monkeypatch.setattr(template, "MAX_RENDERED_CHARS", 10)
    parsed = template.parse_template("{{ request.model }}")
    try:
        parsed.render(template.RenderContext({}, "m" * 50, "0//0"))
    except template.TemplateRenderError as exc:
        message = str(exc)
    else:
        raise AssertionError("rendered over the limit")
    assert "MAX_RENDERED_CHARS" in message and "mockoss serve --max-template-chars" in message, message
