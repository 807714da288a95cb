"""Script the model in Python: Harmony messages, steps and rules that equal the YAML scenario format.

Every builder is an immutable value whose :meth:`to_dict` is exactly the YAML scenario data
(:mod:`mockoss.scenario.schema`), and whose ``from_dict`` reads that data back, so a scenario
written here and one written in YAML are the same thing (``mockoss show NAME --python`` prints a
shipped scenario as builder code). The names follow Harmony (``channel``, ``recipient``,
``content_type``) and openai-harmony's builder style (``from_*`` constructors, ``with_*`` setters
that return a copy). Example, "call the tool, then answer once the tool result is back"::

    from mockoss.steps import final, reasoning, tool_call

    mockoss.use(
        reasoning("Need the weather.") + tool_call("get_weather", {"location": "Tokyo"}),
        final("It is sunny in Tokyo."),
    )

Each positional item of ``mockoss.use``, ``@pytest.mark.mockoss(scenario=[…])`` or
``MockServer(scenario=script(…))`` is one step (a lone :class:`Message` is a one-message step);
``a + b`` joins messages into one completion. :func:`rule` adds a ``match`` block, so answers can
depend on the request (``rule(final("Done."), role="tool")``).

Messages render exactly like the YAML ``messages`` form: ``<|start|>assistant[ to={recipient}]
<|channel|>{channel}[ {content_type}]<|message|>{content}`` closed by ``<|call|>`` (with a
recipient), ``<|return|>`` (final) or ``<|end|>``; ``tool_call(…, recipient_position="channel")``
writes ``<|channel|>{channel} to={recipient}`` instead, as gpt-oss usually does, the only form
SGLang's and vllm-mlx's chat tool parsers read (see :func:`tool_call`).
"""

from __future__ import annotations

from mockoss._steps_builders import LEAK_FORMS, error, fault, final, leak, preamble, raw, reasoning, tool_call
from mockoss._steps_core import Message, Step
from mockoss._steps_script import Rule, Script, as_scenario_data, compile_script, is_builder, rule, script

__all__ = [
    "LEAK_FORMS",
    "Message",
    "Rule",
    "Script",
    "Step",
    "as_scenario_data",
    "compile_script",
    "error",
    "fault",
    "final",
    "is_builder",
    "leak",
    "preamble",
    "raw",
    "reasoning",
    "rule",
    "script",
    "tool_call",
]
