"""openai-agents (the official agent SDK) on the Responses API through a scripted three-turn rule
set: the model leaks its tool call as text, the user nudges, the model calls the tool properly,
then answers. Checks that turns follow what the SDK resends (to_input_list: earlier messages,
reasoning, function_call and function_call_output items) and that the tool runs once.
Skipped when openai-agents is not installed."""

from __future__ import annotations

import pytest

agents = pytest.importorskip("agents")

from openai import AsyncOpenAI

from mockoss.steps import final, leak, reasoning, rule, tool_call


async def test_leak_then_call_then_answer_runs_the_tool_once(mockoss):
    agents.set_tracing_disabled(True)
    mockoss.use(
        rule(leak("get_time", {"city": "Paris"}), name="leak", turn=1),
        rule(reasoning("Call it properly.") + tool_call("get_time", {"city": "Paris"}), name="call", turn=2),
        rule(final("It is noon in Paris."), name="answer", turn=3, role="tool"),
    )
    executed: list[str] = []

    @agents.function_tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        executed.append(city)
        return "12:00"

    async with AsyncOpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        model = agents.OpenAIResponsesModel(mockoss.model, client)
        agent = agents.Agent(name="clock", instructions="Be brief.", tools=[get_time], model=model)
        first = await agents.Runner.run(agent, "What time is it in Paris?")
        assert first.final_output == 'to=functions.get_time {"city":"Paris"}'  # the leak reaches the app
        history = first.to_input_list() + [{"role": "user", "content": "Call the tool properly."}]
        second = await agents.Runner.run(agent, history)

    assert second.final_output == "It is noon in Paris."
    assert executed == ["Paris"]
    assert [(r.rule, r.turn) for r in mockoss.requests] == [("leak", 1), ("call", 2), ("answer", 3)]
