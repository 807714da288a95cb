"""The ``mockoss`` fixture answers the same test whether it emulates vLLM or runs it.

In the default run the fixture emulates the ``vllm`` profile; under ``pytest --mockoss-engine
vllm`` (``.ci/run-vllm``) the same test goes through real vLLM with the scripted model, and the
answer carries vLLM's own ``system_fingerprint`` (``vllm-<version>-<hash>``,
vllm-project/vllm@v0.32.0: ``vllm/entrypoints/openai/chat_completion/serving.py``).
"""

from __future__ import annotations

import openai
import pytest

pytestmark = pytest.mark.timeout(900)  # under --mockoss-engine vllm the first test starts vLLM


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as sdk:
        yield sdk


def test_leaked_recipient_mcp_call_through_the_fixture(mockoss, client) -> None:
    mockoss.use("leaked-recipient-no-tools")

    response = client.responses.create(model=mockoss.model, input="What time is it in LA?")

    assert [item.type for item in response.output] == ["reasoning", "mcp_call"]
    assert [r.status for r in mockoss.requests] == [200]


def test_chat_answer_names_its_server(mockoss, client, request: pytest.FixtureRequest) -> None:
    mockoss.use([{"completion": {"messages": [{"channel": "final", "content": "Hi!"}]}}])

    reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "Hello"}])

    assert reply.choices[0].message.content == "Hi!"
    if request.config.getoption("mockoss_engine"):
        assert reply.system_fingerprint is not None and reply.system_fingerprint.startswith("vllm-")
    assert mockoss.requests[0].completion is not None


@pytest.mark.mockoss(profile="ollama")
def test_other_profiles_are_skipped_under_the_engine(mockoss, request: pytest.FixtureRequest) -> None:
    assert not request.config.getoption("mockoss_engine"), "skipped by the fixture under --mockoss-engine"
    assert mockoss.model == "gpt-oss:20b"
