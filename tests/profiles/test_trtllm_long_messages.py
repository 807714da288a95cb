"""A completion of many messages is parsed in time linear in its messages (issue 9).

openai-harmony's ``StreamableParser.messages`` builds a ``Message`` of every completed message on
each read; the parser trace (:func:`mockoss.harmony.trace.parse_tokens`) read it at every
message's end, so a completion of 2,000 short messages (an agent's reasoning and preambles) cost
~32 s on the first request that parsed it, on the event loop. The trace now decodes only each new
message (``_Completed``). Counted here through the trtllm profile, whose routes parse the output
with that trace; the trace itself is compared with the per-token reading in
``tests/harmony/test_trace_linear.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import Message

from mockoss.server.core import MockServer

PAIRS = 150


@pytest.mark.parametrize(("endpoint", "stream"), [("chat", False), ("chat", True), ("responses", False)])
def test_many_messages_build_each_message_a_bounded_number_of_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, endpoint: str, stream: bool) -> None:
    messages = [m for i in range(PAIRS) for m in ({"channel": "analysis", "content": f"step {i}"}, {"channel": "commentary", "content": "noted"})]
    messages.append({"channel": "final", "content": "done"})
    scenario = tmp_path / "many.json"
    scenario.write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    server = MockServer(scenario=str(scenario), profile="trtllm")
    built = [0]
    real = Message.from_dict.__func__  # type: ignore[attr-defined]

    def counting(cls: Any, data: Any) -> Any:
        built[0] += 1
        return real(cls, data)

    monkeypatch.setattr(Message, "from_dict", classmethod(counting))
    body = {"model": server.info.served_model_names[0], "stream": stream}
    body.update({"messages": [{"role": "user", "content": "hi"}]} if endpoint == "chat" else {"input": "hi"})
    reply = server.respond(endpoint, json.dumps(body).encode(), {})[0]
    assert reply.status == 200
    # a parse builds each message at its end and once more in the final list (901 for 301 here;
    # 45,751 when every message end rebuilt the whole list)
    assert 0 < built[0] <= 8 * len(messages), f"{built[0]} messages built for {len(messages)}"
