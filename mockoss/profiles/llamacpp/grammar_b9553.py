"""llama.cpp b9553's gpt-oss grammar (``tool_call_opens="header"``), rebuilt rule for rule.

Source: ``common_chat_params_init_gpt_oss`` in ``common/chat.cpp`` of llama.cpp tag b9553 as
vendored at Telosnex/fllama@1d28604d (``src/llama.cpp/common/chat.cpp:1118-1190``), with the
builder's helpers of ``common/chat-peg-parser.h`` (``tool_open`` and ``tool_name`` are
``atomic(tag(…))``) and the executor of ``common/peg-parser.cpp`` (:mod:`.peg` reproduces it).
Checked against that build's own parser by tests/golden/test_llamacpp_goldens.py.

It parses the same texts to the same messages as the grammar the profile follows
(:func:`.gptoss._build_grammar`, ``common/parsers/gpt-oss.cpp@2629d7b5``); two things differ:

* **When a streamed tool call opens.** The call's name sits inside a ``tool_open`` node that
  spans the whole header, ``p.tool_open(" to=functions." NAME channel constraint "<|message|>")``
  (or ``channel " to=functions." NAME constraint "<|message|>"``), and ``atomic`` drops the nodes
  of a header cut by the end of the input. The mapper adds the call at its name node
  (``common/chat-peg-parser.cpp:320-333``), so the call appears once the whole header has parsed,
  its first delta carrying the whole name and arguments ``"{"``; a header that then fails sends
  no tool delta before the error. (2629d7b5 opens the call at ``" to=functions."`` alone.)
* **Where a failed parse stops** (the ``pos`` of b9553's error, :func:`.gptoss.failed_parse_message`):
  the grammar is ``zero_or_more(start + any) + start + (tool_call | final)``, ``start`` one literal
  ``"<|start|>assistant"``, and multi-token markers such as ``"<|channel|>analysis<|message|>"``
  single literals, so a turn whose last message matches no branch fails after its
  ``<|start|>assistant``.

Rules (``p.rule``) and the ``tool`` tag add AST nodes the mapper ignores: they are left out.
"""

from __future__ import annotations

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.peg import atomic, chars, choice, literal, optional, repeat, sequence, tag, until

__all__ = ["build_b9553"]

_REASONING, _CONTENT, _TOOL_OPEN, _TOOL_NAME, _TOOL_ARGS = "reasoning", "content", "tool-open", "tool-name", "tool-args"


def build_b9553(
    tools: tuple[str, ...], tool_choice: str, extract_reasoning: bool, response_format: bool = False
) -> tuple[peg.Parser, peg.Parser | None]:
    """b9553's ``common_chat_params_init_gpt_oss`` parser (module docstring).

    Args:
        tools: declared function names, in request order (``foreach_function``).
        tool_choice: ``"auto"``, ``"none"`` or ``"required"`` (anything else counts as ``auto``).
        extract_reasoning: ``reasoning_format != none`` (else analysis messages are content).
        response_format: a JSON schema was requested.

    Returns:
        ``(root, message)``, the fields of a :class:`~.gptoss.Grammar` (which
        :func:`.gptoss.build_grammar` makes of them: this module does not import that one), whose
        ``root`` is ``sequence(repeat(message), …)``, as :mod:`.incremental` requires.
    """
    start = literal("<|start|>assistant")
    end = literal("<|end|>")
    content = until("<|end|>")
    channel = sequence(literal("<|channel|>"), choice(literal("commentary"), literal("analysis")))
    constrain_type = chars("[A-Za-z0-9_-]", 1, -1)
    stray = optional(sequence(literal("<|channel|>commentary"), optional(literal(" to=assistant"))))
    start_analysis = sequence(stray, literal("<|channel|>analysis<|message|>"))
    if extract_reasoning:
        analysis = sequence(start_analysis, tag(_REASONING, content), end)
    else:
        analysis = tag(_CONTENT, sequence(start_analysis, content, end))
    preamble = sequence(literal("<|channel|>commentary<|message|>"), tag(_CONTENT, content), end)
    final = sequence(stray, literal("<|channel|>final<|message|>"), tag(_CONTENT, content))
    unsolicited = atomic(sequence(optional(channel), literal(" to="), content, end))
    message = sequence(start, choice(preamble, analysis))
    constraint = optional(sequence(peg.space(), optional(literal("<|constrain|>")), constrain_type))

    if response_format:
        formatted = sequence(
            literal("<|channel|>final"), constraint, literal("<|message|>"), tag(_CONTENT, peg.json_value)
        )
        leading = sequence(start, analysis)
        return sequence(repeat(leading), start, formatted), leading

    prefix = repeat(message)
    if tools and tool_choice != "none":
        per_tool = []
        for name in tools:
            func_name = sequence(literal(" to=functions."), atomic(tag(_TOOL_NAME, literal(name))))
            args = tag(_TOOL_ARGS, peg.json_value)
            in_role = sequence(
                atomic(tag(_TOOL_OPEN, sequence(func_name, channel, constraint, literal("<|message|>")))), args
            )
            in_channel = sequence(
                atomic(tag(_TOOL_OPEN, sequence(channel, func_name, constraint, literal("<|message|>")))), args
            )
            per_tool.append(choice(in_role, in_channel))
        tool_call = choice(*per_tool)
        if tool_choice == "required":
            return sequence(prefix, start, tool_call), message
        return sequence(prefix, start, choice(tool_call, final)), message
    return sequence(prefix, start, choice(final, unsolicited)), message
