"""A `replay:` step whose status or headers HTTP/1.1 cannot send is refused when the scenario loads.

Breaker report, session 12, finding 5 (/tmp/brk12/atk/rep.py): these passed `mockoss validate` and then
dropped the connection, gave an unscripted 500 or a truncated body at serve time. What HTTP can carry:
RFC 9110 §5.6.2 (token), h11 0.16.0 `h11/_abnf.py` (`token`, `field_value`), uvicorn 0.55.0
`uvicorn/protocols/http/httptools_impl.py` (`HEADER_RE`, `HEADER_VALUE_RE`, no body for 204/304),
Starlette and mockoss's fast path (header values encoded as Latin-1). See mockoss/scenario/replay_http.py.
"""

import subprocess
import sys

import httpx
import pytest
import yaml

from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

REFUSED = [
    ({"content_type": "text/plain\r\nX-Evil: 1"}, "content_type", "control character '\\r'"),
    ({"headers": {"X-A": "a\r\nX-Evil: 1"}}, "headers.X-A", "control character '\\r'"),
    ({"headers": {"X-A": "a\x00b"}}, "headers.X-A", "control character '\\x00'"),
    ({"headers": {"bad name": "x"}}, "headers.bad name", "is not an HTTP token"),
    ({"headers": {"X-A:": "x"}}, "headers.X-A:", "is not an HTTP token"),
    ({"headers": {"X-A": "東京"}}, "headers.X-A", "not Latin-1"),
    ({"content_type": "text/東京"}, "content_type", "not Latin-1"),
    ({"headers": {"X-A": " padded"}}, "headers.X-A", "starts or ends with a space or tab"),
    ({"headers": {"Content-Length": "999"}}, "headers.Content-Length", "mockoss frames the body itself"),
    ({"headers": {"transfer-encoding": "chunked"}}, "headers.transfer-encoding", "mockoss frames the body itself"),
    ({"headers": {"X-A": "1", "x-a": "2"}}, "headers", "given twice"),
    ({"status": 101}, "status", "greater than or equal to 200"),
    ({"status": 100}, "status", "greater than or equal to 200"),
    ({"status": 204, "body": "xyz"}, "body", "a 204 reply has no body"),
    (
        {"status": 304, "frames": ["data: x\n\n"], "content_type": "text/event-stream"},
        "frames",
        "a 304 reply has no body",
    ),
]


def _scenario(tmp_path, replay):
    path = tmp_path / "bad.yaml"
    step = {"status": 200, "body": "x", **replay}
    if "frames" in replay:
        del step["body"]
    path.write_text(
        "version: 1\nsteps:\n  - note: first\n    replay:\n"
        + yaml.safe_dump(step, allow_unicode=True).replace("\n", "\n      ").join(["      ", ""])
    )
    return path


@pytest.mark.parametrize(("replay", "field", "problem"), REFUSED)
def test_a_replay_http_cannot_send_is_refused_with_file_line_and_field(tmp_path, replay, field, problem):
    path = _scenario(tmp_path, replay)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    text = str(info.value)
    assert text.startswith(f"{path}:") and f": steps[0].replay.{field}:" in text and problem in text, text
    key = field.rsplit(".", 1)[-1] if field != "headers" else "X-A"
    lines = path.read_text().splitlines()
    expected = next(i for i, line in enumerate(lines, 1) if line.strip().strip("'\"").startswith(key))
    expected += lines[expected - 1].endswith(":")  # a block value's line is its first entry's
    assert text.split(":")[1] == str(expected), (text, lines)


def test_mockoss_validate_refuses_it_too(tmp_path):
    path = _scenario(tmp_path, {"content_type": "text/plain\r\nX-Evil: 1"})
    done = subprocess.run(
        [sys.executable, "-m", "mockoss", "validate", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done
    assert "steps[0].replay.content_type" in done.stdout + done.stderr


@pytest.mark.parametrize(
    "replay",
    [
        {"status": 200, "headers": {"X-A": "caf\u00e9\tau lait", "x-empty": "", "retry-after": "2"}, "body": "{}"},
        {"status": 204, "body": ""},
        {"status": 304, "content_type": "text/event-stream", "frames": []},
        {"status": 599, "content_type": "text/plain; charset=latin-1", "body": "x"},
    ],
)
def test_what_http_can_send_is_kept_and_served(replay):
    server = ThreadedServer(MockServer(scenario={"version": 1, "steps": [{"replay": replay}]})).start()
    try:
        reply = httpx.post(
            server.url + "/v1/chat/completions",
            json={"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]},
            timeout=10,
        )
    finally:
        server.stop()
    assert reply.status_code == replay["status"]
    for name, value in replay.get("headers", {}).items():
        assert reply.headers.raw[[n for n, _ in reply.headers.raw].index(name.lower().encode())][1] == value.encode(
            "latin-1"
        )
    assert reply.content == replay.get("body", "").encode()
