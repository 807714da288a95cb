"""Real vLLM behind mockoss: scripted completions surfaced by vLLM's own serving code (issue 8).

Runs where vLLM imports (the ``vllm`` extra's venv, or ``MOCKOSS_VLLM_PYTHON``); skips elsewhere,
as in the default CI venv. The opt-in CI path ``.ci/run-vllm`` installs the extra and runs these.
vLLM starts once for the module (about a minute on 2 cores).

The expected ``[reasoning, mcp_call]`` for ``leaked-recipient-no-tools`` is what the first seed
write-up shows shipped vLLM returning for a recipient ``to=tool.mcp`` invented with no tools
declared; here it comes from vllm-project/vllm@v0.32.0 ``vllm/entrypoints/openai/responses/``
(``harmony_to_response_output``), not from mockoss's emulation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import httpx
import openai
import pytest

from mockoss.engines import EngineError
from mockoss.engines.vllm.launcher import VllmEngine
from mockoss.engines.vllm.sidechannel import XARGS_KEY, attach
from mockoss.harmony import Completion
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.upstream import Upstream

pytestmark = pytest.mark.timeout(900)

MODEL = "openai/gpt-oss-20b"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Tokyo"}<|call|>'
)


@pytest.fixture(scope="module")
def engine() -> Iterator[VllmEngine]:
    candidate = VllmEngine()
    try:
        candidate.check()
    except EngineError as exc:
        if os.environ.get("MOCKOSS_CI_VLLM") == "1":  # the opt-in CI path must not pass by skipping
            pytest.fail(f"MOCKOSS_CI_VLLM=1 but vLLM is not usable: {exc}")
        pytest.skip(f"real vLLM is not installed here (install the 'vllm' extra or set MOCKOSS_VLLM_PYTHON): {exc}")
    with candidate.start() as started:
        yield started


@pytest.fixture(scope="module")
def front(engine: VllmEngine) -> Iterator[ThreadedServer]:
    running = ThreadedServer(MockServer(upstream=Upstream(engine.url, mode="scripted"))).start()
    yield running
    running.stop()


@pytest.fixture
def server(front: ThreadedServer) -> MockServer:
    front.server.reset()
    front.server.scenario = None
    return front.server


@pytest.fixture
def client(front: ThreadedServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=front.url + "/v1", api_key="unused", max_retries=0) as sdk:
        yield sdk


def test_leaked_recipient_becomes_mcp_call_in_real_vllm(server: MockServer, client: openai.OpenAI) -> None:
    server.use_scenario("leaked-recipient-no-tools")

    response = client.responses.create(model=MODEL, input="What time is it in LA?")

    assert [item.type for item in response.output] == ["reasoning", "mcp_call"]
    call = response.output[1]
    assert (call.server_label, call.name) == ("tool", "mcp")
    assert json.loads(call.arguments)["name"] == "get_current_time"
    # vLLM's own ids and fingerprint shapes, not mockoss's: resp_ + 16 hex digits.
    assert response.id.startswith("resp_") and len(response.id) == len("resp_") + 16
    [logged] = server.requests
    assert (logged.scenario, logged.step, logged.status) == ("leaked-recipient-no-tools", 0, 200)
    assert logged.completion is not None and "to=tool.mcp" in logged.completion


def test_chat_tool_call_streamed_and_not(server: MockServer, client: openai.OpenAI) -> None:
    server.use_scenario(_scenario([CALL, CALL]))

    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Weather?"}], tools=[WEATHER_TOOL])
    [call] = reply.choices[0].message.tool_calls or []
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Tokyo"})
    assert reply.choices[0].finish_reason == "tool_calls"
    assert reply.choices[0].message.reasoning == "Need the weather."  # type: ignore[attr-defined]
    assert reply.system_fingerprint is not None and reply.system_fingerprint.startswith("vllm-0.")

    chunks = list(
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Weather?"}], tools=[WEATHER_TOOL], stream=True
        )
    )
    arguments = "".join(
        (delta.function.arguments or "")
        for chunk in chunks
        for choice in chunk.choices
        for delta in (choice.delta.tool_calls or [])
        if delta.function is not None
    )
    assert json.loads(arguments) == {"city": "Tokyo"}
    assert chunks[-1].choices[-1].finish_reason == "tool_calls" or any(
        c.finish_reason == "tool_calls" for chunk in chunks for c in chunk.choices
    )
    assert [r.status for r in server.requests] == [200, 200]


def test_requests_mockoss_answers_itself_never_reach_vllm(server: MockServer, front: ThreadedServer) -> None:
    server.use_scenario(_scenario([{"error": {"status": 429, "message": "slow down"}}]))
    with httpx.Client(timeout=60) as http:
        scripted = http.post(front.url + "/v1/chat/completions", json={"model": MODEL, "messages": [{"role": "user", "content": "x"}]})
        unknown = http.post(front.url + "/v1/chat/completions", json={"model": "nope", "messages": [{"role": "user", "content": "x"}]})
    assert scripted.status_code == 429 and "slow down" in scripted.text
    assert unknown.status_code == 404
    assert [r.status for r in server.requests] == [429, 404]


def test_side_channel_is_invisible_and_unscripted_requests_end_at_once(engine: VllmEngine) -> None:
    tokens = Completion.from_text("<|channel|>final<|message|>Hi!<|return|>").tokens
    body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}]}
    with httpx.Client(timeout=60) as http:
        scripted = http.post(engine.url + "/v1/chat/completions", json=attach(body, tokens))
        bare = http.post(engine.url + "/v1/chat/completions", json=body)
        bad = http.post(engine.url + "/v1/chat/completions", json={**body, "vllm_xargs": {XARGS_KEY: ["x"]}})
    assert scripted.json()["choices"][0]["message"]["content"] == "Hi!"
    assert XARGS_KEY not in scripted.text
    assert scripted.json()["usage"]["completion_tokens"] == len(tokens)
    # No script: the weightless model's own choice is <|return|>, so the answer is empty at once.
    assert bare.status_code == 200 and bare.json()["usage"]["completion_tokens"] == 1
    assert bad.status_code == 400 and XARGS_KEY in bad.text


def test_concurrent_requests_each_get_their_own_script(engine: VllmEngine) -> None:
    """vLLM batches these (--max-num-seqs 4): each row of the batch must follow its own script."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"Answer number {n}: " + "word " * (5 * n) for n in range(6)]

    def ask(text: str) -> str:
        tokens = Completion.from_text(f"<|channel|>final<|message|>{text}<|return|>").tokens
        body = attach({"model": MODEL, "messages": [{"role": "user", "content": text}]}, tokens)
        with httpx.Client(timeout=120) as http:
            return http.post(engine.url + "/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"]

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(ask, texts)) == texts


def test_model_directory_tokenizer_matches_openai_harmony(engine: VllmEngine) -> None:
    check = (
        "from mockoss.engines.vllm.model_dir import ensure_model_dir, check_tokenizer\n"
        "print(check_tokenizer(ensure_model_dir()))\n"
    )
    out = engine._run("-c", check)
    assert int(out) > 50


def _scenario(steps: list) -> object:
    from mockoss.scenario.loader import scenario_from_data

    data = [{"completion": {"raw": s}} if isinstance(s, str) else s for s in steps]
    return scenario_from_data({"steps": data}, name="engine-test", default_version=True)
