"""Ollama's streamed ``/v1/responses``: one id per reasoning item, and ``output: null`` when nothing
was produced (ollama/ollama@fb3076099 ``openai/responses.go`` ``ResponsesStreamConverter``).

``processThinking`` draws ``rs_%d`` each time a reasoning item starts (:1242-1244), so thinking that
resumes after text is a second item with an id of its own; ``buildFinalOutput`` appends the items
to a nil slice (:1536-1555), so a stream with none completes with ``"output": null`` (the
``response.created``/``in_progress`` objects carry ``[]``, :1226-1236). Both showed in
``tests/golden/ollama-0.33.0-rc2`` (Ollama's Go code run by ``tools/goldens/ollama_harness.go``).
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.scenario.loader import Step
from mockoss.server.core import MockServer

TWO_THOUGHTS = (
    "<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>commentary<|message|>{note}<|end|>"
    "<|start|>assistant<|channel|>analysis<|message|>Second.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)


def events(text: str) -> list[dict]:
    server = MockServer(profile="ollama", served_model_names=["gpt-oss:20b"], request_log_limit=1)
    body = {"model": "gpt-oss:20b", "input": "Hi", "stream": True}
    step = Step(index=0, completion=Completion.from_text(text), error=None)
    reply, _ = server.respond("responses", json.dumps(body).encode(), {}, step=step)
    frames = b"".join(reply.frames).decode().split("\n\n")
    return [json.loads(f.split("data: ", 1)[1]) for f in frames if "data: " in f]


# "mockoss-id:" in the script: the template is filled without the compiled cut (responses._compiled);
# "@@mockoss-rs+1@@": a later reasoning item's placeholder in the script, left as it is.
@pytest.mark.parametrize("note", ["Plan.", "mockoss-id: x", "@@mockoss-rs+1@@"])
def test_each_reasoning_item_has_its_own_id(note):
    got = events(TWO_THOUGHTS.format(note=note))
    added = [
        e["item"]["id"] for e in got if e["type"] == "response.output_item.added" and e["item"]["type"] == "reasoning"
    ]
    assert len(added) == 2 and added[0] != added[1] and all(i.startswith("rs_") and i[3:].isdigit() for i in added)
    deltas = [(e["item_id"], e["delta"]) for e in got if e["type"] == "response.reasoning_summary_text.delta"]
    assert deltas == [(added[0], "First"), (added[0], "."), (added[1], "Second"), (added[1], ".")]
    output = got[-1]["response"]["output"]
    assert [item["id"] for item in output if item["type"] == "reasoning"] == added
    texts = [e["delta"] for e in got if e["type"] == "response.output_text.delta"]
    assert "".join(texts) == note + "Done."


def test_a_stream_with_no_item_completes_with_null_output():
    got = events("The capital of Canada is Ottawa.<|return|>")  # no header: Ollama's parser emits nothing
    assert [e["type"] for e in got] == ["response.created", "response.in_progress", "response.completed"]
    assert [e["response"]["output"] for e in got] == [[], [], None]
