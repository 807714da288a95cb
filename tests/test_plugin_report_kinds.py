"""The failure report names what answered each request: a completion, a scripted error, or bytes
replayed from a recording (newcomer report: a replayed 200 was labelled "(scripted error)")."""

from __future__ import annotations

import pytest

from mockoss.pytest_plugin._report import describe_request
from mockoss.server.records import RecordedRequest


def _record(status: int, completion: str | None) -> RecordedRequest:
    return RecordedRequest(
        index=0, endpoint="chat", raw=b"{}", header_items=(), scenario="s", step=0, status=status,
        completion=completion, rule="#1", turn=1,
    )


@pytest.mark.parametrize(
    ("status", "completion", "ending"),
    [
        (200, "<|channel|>final<|message|>Hi<|return|>", "step 0, turn 1"),
        (429, None, "step 0, turn 1 (scripted error)"),
        (200, None, "step 0, turn 1 (replayed bytes)"),
    ],
)
def test_the_first_line_says_what_answered(status, completion, ending):
    assert describe_request(_record(status, completion))[0] == f"#0 POST /v1/chat/completions -> {status}: scenario 's', rule #1, {ending}"
