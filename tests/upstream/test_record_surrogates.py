"""`--record DIR` with text UTF-8 cannot encode: a request holding a lone UTF-16 surrogate.

JSON lets a string hold ``\\ud800`` alone; Python's json reads it as the code point U+D800, which
has no UTF-8 form. A newcomer's report: ``mockoss serve --profile sglang --scenario clean-answer
--record rec`` and a chat request whose user message was ``"a\\ud800b"`` logged ``could not write
request 0``; sent first, the recording lost its header (``mockoss validate`` failed), sent later,
its step was silently missing. Every exchange must be recorded, the file a valid scenario after
every step, and the replay must answer the same.
"""

import json
import logging
import threading

import httpx
import pytest
import yaml
from upstream_helpers import MODEL, scenario, stopped

from mockoss.cli import main
from mockoss.scenario.loader import load_scenario
from mockoss.scenario.pattern import compile_search
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder
from mockoss.upstream import record as record_module
from mockoss.upstream.journal import Journal

CHAT = "/v1/chat/completions"
#: The newcomer's request, as curl sent it: the escape is in the bytes, the surrogate in the str.
SURROGATE = "a\ud800b"


def _body(content_json: str) -> bytes:
    """A chat body whose user message is the JSON string literal ``content_json`` (escapes kept)."""
    return f'{{"model":{json.dumps(MODEL)},"messages":[{{"role":"user","content":{content_json}}}]}}'.encode()


def _send(url: str, bodies: list[bytes]) -> list[tuple[int, bytes]]:
    with httpx.Client(timeout=30) as client:
        replies = [client.post(url + CHAT, content=body, headers={"content-type": "application/json"}) for body in bodies]
    return [(reply.status_code, reply.content) for reply in replies]


def _no_write_errors(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r.getMessage() for r in caplog.records if "could not" in r.getMessage()]


@pytest.mark.parametrize("first", [True, False], ids=["surrogate-first", "surrogate-later"])
def test_a_lone_surrogate_is_recorded_and_the_recording_replays_the_same(serve, tmp_path, caplog, first):
    """The newcomer's case (sglang, clean-answer), with the surrogate request first or later."""
    caplog.set_level(logging.WARNING, logger="mockoss")
    prompts = [r'"a\ud800b"', '"second"', '"third"']
    if not first:
        prompts = [prompts[1], prompts[0], prompts[2]]
    bodies = [_body(p) for p in prompts]
    recorder = Recorder(tmp_path, "clean-answer")
    with stopped(serve(MockServer(profile="sglang", scenario="clean-answer", recorder=recorder))) as mock:
        received = _send(mock.url, bodies)
    assert [status for status, _ in received] == [200, 200, 200]
    _no_write_errors(caplog)
    path = tmp_path / "clean-answer.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Replay it byte for byte with: ")  # the header, whatever came first
    assert main(["validate", str(tmp_path)]) == 0
    loaded = load_scenario(path)
    assert len(loaded.steps) == 3
    notes = [step["note"] for step in yaml.safe_load(text)["steps"]]
    expected = ["second", SURROGATE, "third"] if not first else [SURROGATE, "second", "third"]
    assert notes == [f"chat request {i}: {prompt}" for i, prompt in enumerate(expected)]  # the code point itself, read back
    replay = serve(MockServer(profile="sglang", scenario=str(path)))
    assert _send(replay.url, bodies) == received


def test_a_surrogate_echoed_into_the_completion_and_a_match_rule_replays_the_same(serve, tmp_path, caplog):
    """The surrogate reaches ``completion.raw`` (a ``{{ request… }}`` template) and, with
    ``--record-match --redact``, the ``match.last_user`` pattern; replayed in order it gives the
    same bytes, and out of order each request still finds its own rule."""
    caplog.set_level(logging.WARNING, logger="mockoss")
    source = scenario(
        {"completion": {"messages": [{"channel": "final", "content": "One: {{ request.messages[-1].content }}"}]}},
        {"completion": {"messages": [{"channel": "final", "content": "Two: {{ request.messages[-1].content }}"}]}},
        {"completion": {"messages": [{"channel": "final", "content": "Three: {{ request.messages[-1].content }}"}]}},
        name="echo",
    )
    bodies = [_body('"plain"'), _body(r'"x\udfff y"'), _body(r'"\ud800 and \udc00"')]
    recorder = Recorder(tmp_path, "echo", match=True, redact=True)
    with stopped(serve(MockServer(scenario=source, recorder=recorder))) as mock:
        received = _send(mock.url, bodies)
    assert [status for status, _ in received] == [200, 200, 200]
    assert b"Two: x" in received[1][1] and b"Three: " in received[2][1]
    _no_write_errors(caplog)
    path = tmp_path / "echo.yaml"
    assert main(["validate", str(path)]) == 0
    rules = load_scenario(path).rules
    assert len(rules) == 3
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [rule["steps"][0]["note"] for rule in data["rules"]] == [
        "chat request 0: plain", "chat request 1: x\udfff y", "chat request 2: \ud800 and \udc00",
    ]
    replay = serve(MockServer(scenario=str(path)))
    assert _send(replay.url, bodies) == received  # ids derive from the request's index: same order, same bytes
    shuffled = serve(MockServer(scenario=str(path)))
    order = [2, 0, 1]
    contents = [json.loads(body)["choices"][0]["message"]["content"] for _, body in _send(shuffled.url, [bodies[i] for i in order])]
    assert contents == [json.loads(received[i][1])["choices"][0]["message"]["content"] for i in order]


def test_a_step_that_fails_to_render_leaves_the_header_to_the_next(serve, tmp_path, monkeypatch, caplog):
    """Whatever breaks one step, the file keeps its header and the later steps."""
    real = record_module._dump
    steps = []

    def failing_first_step(data):
        if isinstance(data, list):  # a step (the header is a mapping)
            steps.append(data)
            if len(steps) == 1:
                raise RuntimeError("boom")
        return real(data)

    monkeypatch.setattr(record_module, "_dump", failing_first_step)
    recorder = Recorder(tmp_path, "header")
    with stopped(serve(MockServer(profile="sglang", scenario="clean-answer", recorder=recorder))) as mock:
        received = _send(mock.url, [_body('"first"'), _body('"second"'), _body('"third"')])
    assert [status for status, _ in received] == [200, 200, 200]  # the reply never depends on the recording
    assert any("could not write request 0" in r.getMessage() for r in caplog.records)
    path = tmp_path / "header.yaml"
    assert path.read_text(encoding="utf-8").startswith("# Replay it byte for byte with: ")
    notes = [step.note for step in load_scenario(path).steps]
    assert notes == ["chat request 1: second", "chat request 2: third"]


def test_an_entry_utf8_cannot_encode_costs_only_that_entry(tmp_path, caplog):
    """The journal encodes entry by entry: one bad entry in a batch does not lose the batch."""
    gate = threading.Event()

    def render(entry: str) -> str:
        if entry == "gate":
            gate.wait(10)  # the next entries queue meanwhile and are written as one batch
        return entry + "\n"

    journal = Journal(tmp_path / "j.txt", render)
    tickets = []
    for entry in ("gate", "b\ud800", "c"):
        journal.begin()
        tickets.append(journal.submit(entry))
    gate.set()
    for ticket in tickets:
        ticket.result(10)
    journal.close()
    assert (tmp_path / "j.txt").read_text() == "gate\nc\n"
    assert any("could not render" in r.getMessage() for r in caplog.records)


def test_a_pattern_holding_a_lone_surrogate_matches_the_text_it_came_from():
    search = compile_search("\\Aa\ud800b\\Z")
    assert search("a\ud800b")
    assert not search("ab") and not search("a\ud800bc")
