"""Raw mode: a request the server refuses before generating is refused, and its completion is not played.

SGLang renders the model's chat template before it generates, and refuses a tool the template cannot
render (sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/openai/serving_chat.py:2206-2221,
:func:`mockoss.profiles.sglang.chat.template_refusal`); llama-server refuses two assistant messages
at the end of a chat (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp
``oaicompat_chat_params_parse``, :data:`mockoss.profiles.llamacpp.refusals.TWO_ASSISTANTS_AT_END`).
A scripted request so refused draws no step (``request_refusal``, before the player). A completion
given from outside (raw mode's upstream answer, the goldens') gets the same refusal from the server
core now (:meth:`mockoss.server.core.MockServer.respond`), where the profile's ``surface`` refused
it before: the reply is the same, but the request log shows no completion and no step for it, and a
recording holds no step for it. Before, the recording held the refused request's completion as a
step, which its replay (refusing the request before drawing a step) served to the next request.
"""

from __future__ import annotations

import json

import pytest
import yaml
from upstream_helpers import CHAT, MODEL, completion_step, scenario, stopped

from mockoss.harmony import Completion
from mockoss.scenario.loader import Step
from mockoss.scenario.schema import ScriptedError
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder, Upstream

FIRST = "<|channel|>final<|message|>The first answer.<|return|>"
SECOND = "<|channel|>final<|message|>The second answer.<|return|>"
BARE_TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}

#: profile → (a body it refuses before generating, its status, a body it serves)
REFUSED = {
    "sglang": ({**CHAT, "tools": [BARE_TOOL]}, 400, CHAT),
    "llamacpp": (
        {
            **CHAT,
            "messages": [
                *CHAT["messages"],
                {"role": "assistant", "content": "A"},
                {"role": "assistant", "content": "B"},
            ],
        },
        400,
        CHAT,
    ),
}


def _post(http, url: str, body: dict) -> tuple[int, bytes]:
    response = http.post(url + "/v1/chat/completions", json=body)
    return response.status_code, response.content


@pytest.mark.parametrize("profile", sorted(REFUSED))
def test_a_refused_request_is_logged_and_recorded_without_the_upstream_completion(serve, http, tmp_path, profile):
    refused, status, served = REFUSED[profile]
    upstream = serve(MockServer(scenario=scenario(completion_step(FIRST), completion_step(SECOND))))
    recorder = Recorder(tmp_path, "refusal")
    with stopped(
        serve(MockServer(profile=profile, upstream=Upstream(upstream.url, mode="raw", model=MODEL), recorder=recorder))
    ) as proxy:
        first = [_post(http, proxy.url, refused), _post(http, proxy.url, served)]
        log = list(proxy.server.requests)
    assert first[0][0] == status and first[1][0] == 200
    assert b"The second answer." in first[1][1]
    # The refused request: no completion, no step in the log (it was the upstream's FIRST before).
    assert [(r.status, r.step, r.completion) for r in log] == [(status, None, None), (200, None, SECOND)]
    # One step recorded, the served request's; the refused one is refused again on replay.
    steps = yaml.safe_load((tmp_path / "refusal.yaml").read_text())["steps"]
    assert [step["completion"]["raw"] for step in steps] == [SECOND]
    replay = serve(MockServer(profile=profile, scenario=str(tmp_path / "refusal.yaml")))
    assert [_post(http, replay.url, refused), _post(http, replay.url, served)] == first
    assert [(r.status, r.step) for r in replay.server.requests] == [(status, None), (200, 0)]


def _respond(server: MockServer, body: dict, step: Step) -> tuple[int, dict]:
    reply, _ = server.respond("chat", json.dumps(body).encode(), {"content-type": "application/json"}, step=step)
    return reply.status, json.loads(reply.body)


def test_a_given_completion_meets_the_refusal_in_process():
    """The goldens' path (``respond(step=…)``): the refusal's bytes, as ``surface`` gave them."""
    server = MockServer(profile="sglang")
    given = Step(index=0, completion=Completion.from_text(FIRST), error=None)
    status, body = _respond(server, REFUSED["sglang"][0], given)
    assert (status, body["message"]) == (400, "'dict object' has no attribute 'function'")
    assert (server.requests[0].status, server.requests[0].completion) == (400, None)
    assert _respond(server, CHAT, given)[0] == 200
    assert server.requests[1].completion == FIRST


def test_a_given_error_is_answered_as_before():
    """An upstream failure (raw mode's 502 step) is not a completion: it is answered, not refused."""
    server = MockServer(profile="sglang")
    failed = Step(index=0, completion=None, error=ScriptedError(status=502, message="mockoss: upstream down"))
    status, body = _respond(server, REFUSED["sglang"][0], failed)
    assert (status, body["message"]) == (502, "mockoss: upstream down")
