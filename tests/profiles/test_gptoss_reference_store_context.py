"""How the ``gptoss-reference`` store reaches the profile: in the request's own context
(``RequestContext.kept``), filled by the server for a request the player plays, read only for a
warm-up before the lock, ``None`` otherwise (mockoss.profiles.response_store).

Before (bfbb9ed), the store was handed over in a context variable that the player set for some
bodies and the profile read for others; a warm-up before the lock ran the profile without the
player, so it read and wrote whatever store the context still held: another server's, when two
servers share a thread (their first ids are the same for the same seed), and it kept an entry
under the id it predicted, which another request then took. In a fresh context (the HTTP layer's
worker thread) it found no store, so an agent loop's tool output alone was a 500 there and its
plans were built under the lock. The real server keeps a response in its event generator, just
before ``response.completed``, and not once the client is gone
(openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py, ``StreamResponsesEvents.run``):
a reply a scripted transport cuts before its end is not kept (mockoss.server.stored_replies).
"""

from __future__ import annotations

import contextvars
import json
from typing import Any

import pytest

from mockoss.profiles import gptoss_ref
from mockoss.scenario.loader import scenario_from_data
from mockoss.server import warmup
from mockoss.server.core import MockServer

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls")
LONG = " ".join(WORDS[i % len(WORDS)] for i in range(1500))  # above warmup.LONG_TOKENS: warmed before the lock
CALL = {
    "messages": [
        {"channel": "analysis", "content": "Need to use function get_weather."},
        {
            "channel": "commentary",
            "recipient": "functions.get_weather",
            "content_type": "<|constrain|>json",
            "content": '{"location":"Oslo"}',
        },
    ]
}
WEATHER = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    }
]
HEADERS = {"content-type": "application/json"}


def _server(tag: str, *steps: Any, **kwargs: Any) -> MockServer:
    answers = [
        {"completion": s if isinstance(s, dict) else {"messages": [{"channel": "final", "content": f"{tag} {s}"}]}}
        for s in steps
    ]
    scenario = scenario_from_data({"steps": answers}, name=f"kept-{tag}", default_version=True)
    return MockServer(scenario=scenario, profile="gptoss-reference", **kwargs)


def _body(text: Any, **fields: Any) -> dict[str, Any]:
    return {"model": "gpt-oss-120b", "input": text, "metadata": {"__debug": True}, **fields}


def _send(server: MockServer, body: dict[str, Any], headers: dict[str, str] = HEADERS) -> Any:
    return server.handle("responses", json.dumps(body).encode(), headers)


def _json(reply: Any) -> dict[str, Any]:
    if reply.frames:
        return json.loads(reply.frames[-1].split(b"data: ", 1)[1])["response"]
    return json.loads(reply.body)


def test_two_servers_sharing_a_thread_keep_their_own_responses() -> None:
    """Same seed: the second server's first id is the first server's. Its warm-up kept its request
    in the first server's store, under that id: the first server's continuation then had the
    other server's turn in its prompt."""
    first, second = _server("one", LONG, LONG), _server("two", LONG, LONG)
    context = contextvars.copy_context()  # one thread's context, both servers' requests in it

    def play() -> tuple[str, str]:
        warmup.WARM_BEFORE_LOCK.set(True)
        kept_id = _json(_send(first, _body("alpha question", store=True)))["id"]
        assert _json(_send(second, _body("bravo question", store=True)))["id"] == kept_id
        answer = _json(_send(first, _body("next", previous_response_id=kept_id)))
        return kept_id, answer["metadata"]["__debug_input"]

    _kept_id, prompt = context.run(play)
    assert "alpha question" in prompt and "bravo question" not in prompt


def _warm_up(server: MockServer, body: dict[str, Any], context: contextvars.Context) -> None:
    """What the server does before its lock for ``body`` on a worker thread, and no more, in
    ``context`` (the HTTP layer's worker runs a copy of the event loop's, where no request was
    played: a fresh one)."""
    raw = json.dumps(body).encode()

    def run() -> None:
        warmup.WARM_BEFORE_LOCK.set(True)
        with warmup.warmed(server, "responses", raw, body, HEADERS, server._validate("responses", body, raw), None):
            pass

    context.run(run)


def test_a_warm_up_keeps_nothing_under_the_id_it_predicted() -> None:
    """A request warmed for index 1 (store: true) whose index another request (store: false)
    takes: that request's id is not kept, so a continuation of it gets no earlier turns."""
    server = _server("ids", LONG, LONG, LONG)
    first = _json(_send(server, _body("alpha question", store=True)))
    _warm_up(server, _body("bravo question", store=True), contextvars.copy_context())  # this thread's
    taker = _json(_send(server, _body("xray question", store=False)))  # takes index 1
    assert taker["id"] != first["id"]
    answer = _json(_send(server, _body("next", previous_response_id=taker["id"])))
    prompt = answer["metadata"]["__debug_input"]
    assert "bravo question" not in prompt and "xray question" not in prompt  # answered as sent: not kept


def test_a_warm_up_of_a_tool_output_reads_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent loop's tool output sent with ``previous_response_id`` alone: the warm-up renders it
    with the stored call (was a 500 in the worker thread's context, its plans then built under
    the lock), and keeps nothing."""
    server = _server("loop", CALL, LONG)
    call = _json(_send(server, _body("Weather in Oslo?", tools=WEATHER, store=True)))
    output = [{"type": "function_call_output", "call_id": call["output"][1]["call_id"], "output": '{"sky":"clear"}'}]
    planned = []
    real = gptoss_ref.planned_run
    monkeypatch.setattr(gptoss_ref, "planned_run", lambda *a, **k: planned.append(a[1]) or real(*a, **k))
    _warm_up(server, _body(output, tools=WEATHER, store=True, previous_response_id=call["id"]), contextvars.Context())
    assert [c.text for c in planned] and all("sky" not in c.text for c in planned)  # the long answer was planned
    assert server._player.kept.usage()[0] == 1  # the call's entry alone
    answer = _json(_send(server, _body(output, tools=WEATHER, store=True, previous_response_id=call["id"])))
    assert answer["status"] == "completed" and "Weather in Oslo?" in answer["metadata"]["__debug_input"]
    assert server._player.kept.usage()[0] == 2  # the request itself keeps its response, under the lock


def test_an_upstream_answer_neither_reads_nor_keeps() -> None:
    """A step an upstream answered (mockoss.upstream): the upstream holds the store."""
    server = _server("up", LONG, LONG, LONG)
    kept = _json(_send(server, _body("alpha question", store=True)))
    step = server.scenario.rules[0].steps[1]
    raw = json.dumps(_body("bravo question", store=True, previous_response_id=kept["id"])).encode()
    upstream = _json(server.respond("responses", raw, HEADERS, step=step)[0])
    assert "alpha question" not in upstream["metadata"]["__debug_input"]
    answer = _json(_send(server, _body("next", previous_response_id=upstream["id"])))
    assert "bravo question" not in answer["metadata"]["__debug_input"]


@pytest.mark.parametrize(
    ("transport", "stream", "kept"),
    [
        ("disconnect_after_frames=5", True, False),
        ("disconnect_after_frames=-1", True, False),  # every frame but response.completed
        ("truncate_after_frames=-1", True, False),
        ("stall_after_frames=-1", True, False),  # forever: dropped after 600 s
        ("disconnect_after_ms=50,tokens_per_s=10", True, False),
        ("disconnect_after_frames=1000", True, True),  # after every frame: the server had kept it
        ("malformed_at_frame=-1", True, True),  # written, garbled
        ("stall_after_frames=-1,stall_ms=5", True, True),
        ("tokens_per_s=1000", True, True),
        ("disconnect_after_frames=0", False, True),  # after the headers: the server had finished
        ("disconnect_after_ms=50,tokens_per_s=10", False, False),  # gone before the body is due
        ("disconnect_after_ms=5000,tokens_per_s=10", False, True),
    ],
)
def test_a_reply_the_transport_cuts_before_its_end_is_not_kept(transport: str, stream: bool, kept: bool) -> None:
    server = _server("cut", "first answer", "second answer")
    headers = {**HEADERS, "x-mockoss-transport": transport}
    reply = _send(server, _body("alpha question", store=True, stream=stream), headers)
    assert reply.status == 200
    response_id = _stream_id(reply) if reply.frames else json.loads(reply.body)["id"]
    answer = _json(_send(server, _body("next", previous_response_id=response_id)))
    assert ("alpha question" in answer["metadata"]["__debug_input"]) is kept


def _stream_id(reply: Any) -> str:
    return json.loads(reply.frames[0].split(b"data: ", 1)[1])["response"]["id"]


def test_a_continuation_of_a_forgotten_id_says_so_in_the_server_log() -> None:
    """An entry the byte bound dropped: the request is answered as sent, as for an id never kept
    (the real server says nothing then), and mockoss writes why in the request's server log."""
    server = _server("bound", "one", "two", "three", "four", "five")
    first = _json(_send(server, _body("alpha question", store=True)))
    server._player.kept.budget = server._player.kept.usage()[1] + 100  # room for one entry
    _send(server, _body("bravo question", store=True))  # pushes the first out
    answer = _send(server, _body("next", previous_response_id=first["id"]))
    assert "alpha question" not in _json(answer)["metadata"]["__debug_input"]
    (line,) = answer.log
    assert first["id"] in line and "forgotten" in line and f"({server._player.kept.budget:,} bytes for this store" in line
    assert server.requests[-1].server_log == answer.log
    never = _send(server, _body("next", previous_response_id="resp_never_stored"))
    assert never.log == () and never.status == 200
    server.reset()
    assert not server._player.kept.forgot(first["id"])


def test_each_test_id_session_keeps_a_small_share_of_kept_responses() -> None:
    """The second breaker's M1 (14th session): every X-Mockoss-Test-Id session's copy of the server
    kept 16 MiB of responses (256 sessions: 4 GiB); a session keeps SESSION_KEPT_BYTES, and the
    ids it remembers as forgotten shrink with it."""
    from mockoss.profiles import response_store
    from mockoss.server.control import SESSION_KEPT_BYTES, ControlPlane

    plane = ControlPlane(MockServer("clean-answer", profile="gptoss-reference"))
    kept = plane.session("test-a").server.kept
    assert kept.budget == SESSION_KEPT_BYTES < response_store.KEPT_BYTES
    for n in range(2000):
        kept.put(f"resp_{n:032x}", b"x" * 4000)
    assert kept.usage()[1] <= SESSION_KEPT_BYTES
    assert len(kept._forgotten) <= SESSION_KEPT_BYTES * response_store.FORGOTTEN_IDS // response_store.KEPT_BYTES
    assert kept.forgot(f"resp_{1999 - 300:032x}") and not kept.forgot(f"resp_{1999:032x}")
