"""llama-server's ``/v1/responses`` ``function_call`` ids by build, and the streamed tool names.

* ids (switch ``function_call_item_id``): up to b9553 a ``function_call`` item has no ``id`` and
  ``"call_id":"fc_<id>"`` (Telosnex/fllama@1d28604d ``src/llama.cpp/tools/server/server-task.cpp``
  :985 output, :1084 ``output_item.done``, :1666 ``output_item.added``; also
  ggml-org/llama.cpp@00efb3e1); ggml-org/llama.cpp#24882 (merged 2026-06-21, "Add id field to tool
  call responses API") adds the item ``"id":"fc_<id>"``, and ``call_id`` becomes ``"call_<id>"``
  (read in a later ``tools/server/server-task.cpp``). The build the profile follows (b10864,
  2026-09-08) has it: a client that needs the item id (Rig 0.39 in #24882; the AI SDK's
  ``generateText`` over ``.responses()``) works with the default profile.
* names: the followed build streams a tool name as it grows (``get``, then ``get_weather``, each
  with the call's id) and llama-server passes that on. The PEG parser keeps the tag node of a
  literal cut by the end of the input (``common/peg-parser.cpp``), the mapper takes the tool-name
  node's text (``common/chat-peg-parser.cpp@0082ad91``), ``compute_diffs`` re-sends the whole
  longer name (b9553 ``common/chat.cpp:253-270``), and ``server_task_result_cmpl_partial::update``
  calls ``update_chat_msg`` without ``filter_tool_calls`` (default ``false``; b9553
  ``server-task.cpp:1396``, 00efb3e1, and a later copy), so nothing holds the name back.
"""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses import ResponseFunctionToolCall

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.llamacpp import LlamacppProfile
from mockoss.profiles.llamacpp.releases import LLAMACPP_TIMELINE
from mockoss.profiles.llamacpp.wire import random_string
from mockoss.profiles.registry import get_profile

MODEL = "openai/gpt-oss-20b"
CREATED = 1_767_225_600
_ids = IdSource(0, 0)
R = [random_string(_ids) for _ in range(6)]  # the random_string()s a request draws, in order
TEXT = (
    "<|channel|>analysis<|message|>Need weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
BODY = {"input": "hi", "tools": [{"type": "function", "name": "get_weather"}]}


def _reply(profile: Any, *, stream: bool, completion: Completion | None = None) -> Any:
    view = ResponsesRequestView(model=MODEL, stream=stream, tools=(ToolDecl("function", "get_weather"),), body=BODY)
    ctx = RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=40)
    return profile.responses(completion or Completion.from_text(TEXT), view, ctx)


def _events(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in reply.frames:
        head, data = frame.decode().split("\n", 1)
        out.append((head.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_default_function_call_item_has_an_id_and_a_call_prefixed_call_id():
    reply = _reply(LlamacppProfile(), stream=False)
    item = (
        f'{{"id":"fc_{R[3]}","type":"function_call","status":"completed","arguments":"{{\\"city\\":\\"Paris\\"}}",'
        f'"call_id":"call_{R[3]}","name":"get_weather"}}'
    )
    assert item in reply.body.decode()  # the server's key order (ordered_json)
    # (the Response around it lacks fields the openai SDK requires: parallel_tool_calls, tools, …)
    call = ResponseFunctionToolCall.model_validate(json.loads(reply.body)["output"][-1])
    assert (call.id, call.call_id, call.name) == (f"fc_{R[3]}", f"call_{R[3]}", "get_weather")


def test_default_stream_names_the_item_it_streams_arguments_into():
    events = _events(_reply(LlamacppProfile(), stream=True))
    added = [
        data["item"]
        for name, data in events
        if name == "response.output_item.added" and data["item"]["type"] == "function_call"
    ]
    # one output_item.added per named diff: the name grows, as llama-server re-sends it (module docstring)
    assert added == [
        {
            "id": f"fc_{R[3]}",
            "arguments": "",
            "call_id": f"call_{R[3]}",
            "name": name,
            "type": "function_call",
            "status": "in_progress",
        }
        for name in ("get", "get_weather")
    ]
    deltas = [data for name, data in events if name == "response.function_call_arguments.delta"]
    assert deltas and {d["item_id"] for d in deltas} == {f"fc_{R[3]}"}  # the added item's id
    assert "".join(d["delta"] for d in deltas) == '{"city":"Paris"}'
    done = [
        data["item"]
        for name, data in events
        if name == "response.output_item.done" and data["item"]["type"] == "function_call"
    ]
    completed = events[-1][1]["response"]["output"][-1]
    assert done == [completed]
    assert list(completed) == ["id", "type", "status", "arguments", "call_id", "name"]
    assert (completed["id"], completed["call_id"]) == (f"fc_{R[3]}", f"call_{R[3]}")


def test_b9553_function_call_item_has_no_id_and_an_fc_call_id():
    b9553 = get_profile("llamacpp@b9553")
    assert b9553.function_call_item_id is False  # type: ignore[attr-defined]
    body = json.loads(_reply(b9553, stream=False).body)
    assert body["output"][-1] == {
        "type": "function_call",
        "status": "completed",
        "arguments": '{"city":"Paris"}',
        "call_id": f"fc_{R[3]}",
        "name": "get_weather",
    }
    events = _events(_reply(b9553, stream=True))
    added = [
        data["item"]
        for name, data in events
        if name == "response.output_item.added" and data["item"]["type"] == "function_call"
    ]
    assert added[-1] == {
        "arguments": "",
        "call_id": f"fc_{R[3]}",
        "name": "get_weather",
        "type": "function_call",
        "status": "in_progress",
    }
    assert {data["item_id"] for name, data in events if name == "response.function_call_arguments.delta"} == {
        f"fc_{R[3]}"
    }


def test_the_switch_is_on_the_timeline_after_b9553():
    change = next(c for c in LLAMACPP_TIMELINE.changes if c.switch == "function_call_item_id")
    assert (change.release, change.date, change.before, change.after) == ("b10216", "2026-06-21", False, True)
    assert "ggml-org/llama.cpp#24882" in change.sources and not change.verified
    assert LLAMACPP_TIMELINE.switches_at("b9553")["function_call_item_id"] is False
    assert LLAMACPP_TIMELINE.switches_at(LLAMACPP_TIMELINE.newest)["function_call_item_id"] is True


def test_stream_memo_is_kept_per_id_shape():
    """The events are memoised per completion; a second profile with the other ids gets its own."""
    completion = Completion.from_text(TEXT)
    new = _reply(LlamacppProfile(), stream=True, completion=completion)
    old = _reply(LlamacppProfile(function_call_item_id=False), stream=True, completion=completion)
    assert new.frames != old.frames
    assert old.frames == _reply(LlamacppProfile(function_call_item_id=False), stream=True).frames
    assert new.frames == _reply(LlamacppProfile(), stream=True).frames
