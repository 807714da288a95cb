"""The trtllm profile answers a repeated request from templates memoised on the completion (issue 9).

What a trtllm reply holds that depends only on the completion and the request's shape (the parse,
the adapter's mapping, the chunks' and events' text) is built once per (profile, effective
``max_tokens`` via ``Completion.cap``, shape) and memoised on ``Completion._memo``; a request fills
in its ids, ``created``, ``model`` and usage (:mod:`mockoss.profiles.replay`). Before, a
10,000-token answer was parsed and mapped again on every request, on the event loop under the
server lock (~490 ms per streamed Responses request).

Checked here: a repeated request, and one whose ``max_tokens`` does not cut the answer, runs no
parser and no detokenizer again (structural: the calls are counted); and the memoised replies are
byte for byte what the direct path writes (no template, no memo hit), ids included, for the
profile's switches that change ids and chunks, with tool calls (ids inside strings: ``call_``,
``fc_``), a completion whose text holds NUL characters and one holding what a marker looks like
(``mockoss-``: never templated).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mockoss.profiles.trtllm.chat as chat_module
import mockoss.profiles.trtllm.completions_engine as completions_module
import mockoss.profiles.trtllm.responses as responses_module
from mockoss.harmony.completion import Memo
from mockoss.profiles.sse import is_sse_events
from mockoss.server.core import MockServer

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls", "watch", "quietly"]
LONG = " ".join(WORDS[i % len(WORDS)] for i in range(1500))
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("get_weather", "bash")]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def _scenario(tmp_path: Path, name: str, completion: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": completion}]}))
    return str(path)


def _messages(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"messages": list(messages)}


SCENARIOS: dict[str, dict[str, Any]] = {
    "long": _messages({"channel": "analysis", "content": "Think\n" + LONG[:400]}, {"channel": "final", "content": LONG + "\n\nDone."}),
    "calls": _messages(
        {"channel": "analysis", "content": "two calls"},
        {"channel": "commentary", "recipient": "functions.get_weather", "content_type": "<|constrain|>json", "content": '{"city":"Paris"}'},
        {"channel": "commentary", "recipient": "functions.bash", "content_type": "<|constrain|>json", "content": '{"command":["ls"]}'},
    ),
    "preamble": {"raw": "<|channel|>commentary<|message|>Let me look.<|end|><|start|>assistant to=functions.bash<|channel|>commentary"
                        ' <|constrain|>json<|message|>{"x":1}<|call|>'},
    "third-channel": {"raw": "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>one<|end|>"
                             "<|start|>assistant<|channel|>commentary<|message|>pre<|end|><|start|>assistant<|channel|>final<|message|>two<|return|>"},
    "search": {"raw": "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=browser.search"
                      ' <|constrain|>json<|message|>{"query":"q"}<|call|>'},
    # Literal NULs and what the old slots looked like; what a marker looks like: never templated.
    "marker": _messages({"channel": "final", "content": 'x\u0000mockoss-id:0\u0000y "\u0000mockoss-val:1\u0000"'}),
    "nul": _messages({"channel": "analysis", "content": "a\u00000\u0000 b"}, {"channel": "final", "content": 'x\u00000\u0000y "\\u0000model\\u0000"'}),
}
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "fresh-ids": {"stable_stream_ids": False, "role_chunk": "every_batch", "stream_interval": 3},
    "old": {"harmony_library": "oss-harmony", "stream_usage": "always", "merge_deltas": False, "tool_calls_on_analysis": False,
            "completion_usage_chunk": "chat_chunk", "generation_config_stops": False, "cached_tokens_in_usage": False},
}


def _bodies(model: str) -> list[tuple[str, dict[str, Any]]]:
    chat = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    return [
        ("chat", chat),
        ("chat", {**chat, "tools": TOOLS, "max_tokens": 9}),
        ("chat", {**chat, "tools": TOOLS[1:], "stream_options": {"include_usage": False}}),
        ("responses", {"model": model, "input": "hi", "tools": RESPONSES_TOOLS, "instructions": "\u0000output\u0000", "metadata": {"k": "\u00000\u0000"}}),
        ("responses", {"model": model, "input": "hi", "max_output_tokens": 9}),
        ("completions", {"model": model, "prompt": "hi", "stream_options": {"include_usage": True}}),
        ("completions", {"model": model, "prompt": ["a", "bb"], "echo": True, "max_tokens": 9}),
        ("completions", {"model": model, "prompt": "hi", "detokenize": False, "stream_options": {"continuous_usage_stats": False}}),
    ]


def _replies(scenario: str, switches: dict[str, Any]) -> list[tuple[int, bytes, tuple[bytes, ...], str | None]]:
    """Every body of :func:`_bodies`, streamed and not, each sent twice (the second from the memo).
    A stream that claims whole SSE events (chat, completions) must hold them: each frame ends with
    its only newlines, ``\\n\\n``."""
    server = MockServer(scenario=scenario, profile="trtllm", switches=switches, seed=11)
    out = []
    for endpoint, body in _bodies(server.info.served_model_names[0]):
        for stream in (False, True):
            raw = json.dumps({**body, "stream": stream}).encode()
            for _ in range(2):
                reply = server.respond(endpoint, raw, {})[0]
                if is_sse_events(reply.frames):
                    assert all(frame.endswith(b"\n\n") and frame.count(b"\n") == 2 for frame in reply.frames)
                elif stream and endpoint != "responses" and reply.status == 200:
                    raise AssertionError(f"{endpoint} stream not SseEvents")
                out.append((reply.status, reply.body, tuple(reply.frames), reply.abort))
    return out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_memoised_replies_are_the_direct_paths_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, variant: str) -> None:
    scenario = _scenario(tmp_path, name, SCENARIOS[name])
    memoised = _replies(scenario, VARIANTS[variant])
    assert any(status == 200 for status, *_ in memoised)
    # The direct path: no template (ids asked of the request's own id source as the reply is
    # written) and no memo hit anywhere (every parse, mapping and text made again).
    for module in (chat_module, responses_module):
        monkeypatch.setattr(module, "templatable", lambda completion: False)
    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)
    direct = _replies(scenario, VARIANTS[variant])
    assert len(direct) == len(memoised)
    for index, (got, want) in enumerate(zip(memoised, direct, strict=True)):
        assert got == want, f"reply {index} differs"


class _Counting:
    """Wraps a function and counts its calls."""

    def __init__(self, function: Any) -> None:
        self.function, self.calls = function, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.function(*args, **kwargs)


class _CountingEncoding:
    """``load_encoding()`` whose ``decode`` calls are counted (the detokenizer of /v1/completions)."""

    def __init__(self, encoding: Any) -> None:
        self.encoding, self.calls = encoding, 0

    def decode(self, tokens: Any) -> str:
        self.calls += 1
        return self.encoding.decode(tokens)  # type: ignore[no-any-return]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("endpoint", ["chat", "responses", "completions"])
def test_a_repeated_long_request_is_not_parsed_or_detokenized_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, endpoint: str, stream: bool) -> None:
    parse = _Counting(chat_module.parse_with)
    monkeypatch.setattr(chat_module, "parse_with", parse)
    monkeypatch.setattr(responses_module, "parse_with", parse)
    encoding = _CountingEncoding(completions_module.load_encoding())
    monkeypatch.setattr(completions_module, "load_encoding", lambda: encoding)
    server = MockServer(scenario=_scenario(tmp_path, "long", SCENARIOS["long"]), profile="trtllm")
    model = server.info.served_model_names[0]
    body = {
        "chat": {"model": model, "messages": [{"role": "user", "content": "hi"}]},
        "responses": {"model": model, "input": "hi"},
        "completions": {"model": model, "prompt": "hi"},
    }[endpoint]
    body["stream"] = stream
    first = server.respond(endpoint, json.dumps(body).encode(), {})[0]
    assert first.status == 200
    work = (parse.calls, encoding.calls)  # (none when an earlier test left this completion's memo filled)
    again = server.respond(endpoint, json.dumps(body).encode(), {})[0]
    # A limit that does not cut the answer is the same request shape (Completion.cap).
    limit = "max_output_tokens" if endpoint == "responses" else "max_tokens"
    uncut = server.respond(endpoint, json.dumps({**body, limit: 16000}).encode(), {})[0]
    assert (parse.calls, encoding.calls) == work, "a repeated request parsed or detokenized the answer again"
    assert again.status == uncut.status == 200
