"""Message and step builders (see :mod:`mockoss.steps`): reasoning, answers, preambles and tool
calls, leaked calls, raw text, faults, HTTP errors; the types they build are in :mod:`mockoss._steps_core`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss._steps_core import Message, Step, _compact

__all__ = ["LEAK_FORMS", "error", "fault", "final", "leak", "preamble", "raw", "reasoning", "tool_call"]


def reasoning(text: str) -> Message:
    """The chain of thought: a message on the ``analysis`` channel."""
    return Message(channel="analysis", content=text)


def final(text: str) -> Message:
    """The answer the user reads: a message on the ``final`` channel (closed by ``<|return|>``)."""
    return Message(channel="final", content=text)


def preamble(text: str) -> Message:
    """A preamble: user-visible text on the ``commentary`` channel with no recipient, which
    gpt-oss writes before a batch of tool calls (openai/harmony docs/format.md, "Preambles")."""
    return Message(channel="commentary", content=text)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    namespace: str = "functions",
    content_type: str | None = "<|constrain|>json",
    recipient_position: str | None = None,
) -> Message:
    """A function tool call: ``commentary`` channel, recipient ``functions.{name}``, JSON content.

    Args:
        name: the tool's name (``get_weather``); a dotted name (``browser.search``) is the
            recipient as given.
        arguments: a dict (written as compact JSON) or the JSON text as is (e.g. deliberately
            broken JSON); ``None`` is ``{}``.
        namespace: recipient prefix for undotted names.
        content_type: ``<|constrain|>json`` as gpt-oss writes it; ``None`` for none.
        recipient_position: where the recipient goes in the header (YAML ``recipient_position``):

            * ``None`` (default, unset): ``"role"``, or in a step with a fault the fault's own
              ``recipient_position`` (which renders every header; default ``channel``);
            * ``"role"``: ``<|start|>assistant to=functions.x<|channel|>commentary
              <|constrain|>json<|message|>…``, openai-harmony 0.0.8's renderer layout, kept so
              that replies (and goldens recorded from real servers) do not change;
            * ``"channel"``: ``<|start|>assistant<|channel|>commentary to=functions.x
              <|constrain|>json<|message|>…``, as gpt-oss usually writes it
              (openai/harmony@ec7606d:docs/format.md, function calling).

            ``vllm``, ``vllm-2025``, ``ollama``, ``llamacpp``, ``lmstudio``, ``trtllm``, ``openai``,
            ``gptoss-reference`` and ``sglang``'s Responses return the call either way. ``sglang``'s
            chat tool parser finds only the ``channel`` form
            (sgl-project/sglang@v0.5.23:python/sglang/srt/function_call/gpt_oss_detector.py,
            :mod:`mockoss.profiles.sglang.detectors`; non-streamed, only after another message,
            e.g. ``reasoning(…) + tool_call(…)``), and so does ``vllm-mlx``'s, which sees the call
            only when streamed (Responses, or chat with ``reasoning_parser: null``;
            waybarrios/vllm-mlx@v0.6.0:vllm_mlx/tool_parsers/harmony_tool_parser.py,
            :mod:`mockoss.profiles.vllm_mlx.parsers`): pick ``"channel"`` to get the call there.
            ``mlx-lm`` parses neither (the call is raw text in ``content``). Text completions
            (``/v1/completions``, Ollama's ``/api/generate``) show the header as written.

    Raises:
        ValueError: ``recipient_position`` is neither ``None``, ``"role"`` nor ``"channel"``.
    """
    recipient = name if "." in name else f"{namespace}.{name}"
    if arguments is None:
        arguments = {}
    content = arguments if isinstance(arguments, str) else _compact(arguments)
    return Message(
        channel="commentary",
        recipient=recipient,
        content_type=content_type,
        content=content,
        recipient_position=recipient_position,
    )


#: Text forms of a tool call leaked into the answer, as real models emit them (:func:`leak`), and
#: the fault spec each one applies (:mod:`mockoss.harmony.faults`).
LEAK_FORMS: Mapping[str, Mapping[str, str]] = {
    # hermes-agent#84158: `to=functions.terminal {"command":"ls"}` as the final answer.
    "bare": {"kind": "tool_call_as_text", "form": "bare"},
    # hermes-agent PR #84231: the role word kept in front of the recipient.
    "role": {"kind": "tool_call_as_text", "form": "role"},
    # hermes-agent PR #84231: a decoded `<|channel|>commentary to=…` inside the answer.
    "channel": {"kind": "tool_call_as_text", "form": "channel"},
    # hermes-agent#84158 (the reporter's paraphrase) and cloudflare/ai#574: a JSON envelope.
    "json": {"kind": "tool_call_as_text", "form": "json"},
    # oobabooga/textgen#7374: every special token stripped (`assistantcommentary to=functions.x json{…}`).
    "stripped": {"kind": "special_tokens_stripped"},
}


def leak(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    form: str = "bare",
    thinking: str | None = None,
) -> Step:
    """A tool call leaked into the answer as text, in one of the forms real models emit
    (:data:`LEAK_FORMS`), e.g. ``leak("get_weather", {"city": "Oslo"}, form="role")``.

    Built from :func:`tool_call` and the ``tool_call_as_text`` / ``special_tokens_stripped``
    faults, so the YAML equivalent is a ``messages`` completion with that ``fault`` (steps with a
    fault are not tool-checked; ``mockoss faults tool_call_as_text`` shows the text of each form).

    Args:
        name: the tool's name (``get_weather``), as for :func:`tool_call` (a dotted name is the
            recipient as given).
        arguments: a dict (written as compact JSON) or the text as is; ``None`` is ``{}``. Form
            ``json`` needs a JSON object (else the scenario fails to load, a
            :class:`~mockoss.scenario.compiled.ScenarioError`).
        form: how the call is written: ``bare`` ``to=functions.get_weather {"city":"Oslo"}``
            (hermes-agent#84158), ``role`` ``assistant to=functions.…``, ``channel``
            ``<|channel|>commentary to=functions.…`` (a special token inside the text; hermes-agent
            PR #84231), ``json`` ``{"name": "get_weather", "city": "Oslo"}`` (cloudflare/ai#574):
            each the text of a ``final`` message; ``stripped``: the whole completion with every
            special token removed, ``…assistantcommentary to=functions.get_weather json{…}``
            (oobabooga/textgen#7374), which no message header ever ends.
        thinking: text of an analysis message put before the call; ``None``: none.

    Returns:
        A :class:`Step` of one completion.

    What the client gets as chat ``content`` on each profile's default release, tools declared,
    not streamed and streamed. ``as written``: the form's text; ``text``: the stripped completion,
    ``commentary to=functions.NAME json{…}`` (no ``assistant`` in front: the prompt's
    ``<|start|>assistant`` is not generated; a ``thinking`` message puts ``analysis…assistant``
    before it); ``text+eot``: that and a literal ``<|endoftext|>``; ``text from to=``: without
    ``commentary``; ``arguments``: the bare JSON arguments; ``no <|channel|>``: the form's text
    without that token; ``500``: HTTP 500; ``error event``: HTTP 200, then an error event.
    Generated by running each cell; ``tests/steps/test_leak_table.py`` runs them again against
    these tables:

    ============  ==========  ===================  ==============  ==========  =============
    not streamed  bare        role                 channel         json        stripped
    ============  ==========  ===================  ==============  ==========  =============
    vllm          as written  as written           as written      as written  text+eot
    openai        as written  as written           as written      as written  text
    sglang        as written  as written           as written      as written  text from to=
    ollama        as written  as written           as written      as written  ""
    llamacpp      as written  as written           as written      as written  500
    lmstudio      as written  as written           as written      as written  ""
    trtllm        as written  as written           as written      as written  text
    vllm-2025     as written  as written           as written      as written  null
    vllm-0.10.1   ""          ""                   ""              ""          null
    vllm-mlx      arguments   assistant arguments  arguments       as written  arguments
    mlx-lm        markup      markup               markup          markup      text
    ============  ==========  ===================  ==============  ==========  =============

    ============  ==========  ===================  ==============  ==========  =============
    streamed      bare        role                 channel         json        stripped
    ============  ==========  ===================  ==============  ==========  =============
    vllm          as written  as written           as written      as written  text+eot
    openai        as written  as written           as written      as written  text
    sglang        as written  as written           ""              as written  text from to=
    ollama        as written  as written           as written      as written  ""
    llamacpp      as written  as written           as written      as written  error event
    lmstudio      as written  as written           as written      as written  ""
    trtllm        as written  as written           as written      as written  ""
    vllm-2025     as written  as written           as written      as written  ""
    vllm-0.10.1   as written  as written           as written      as written  ""
    vllm-mlx      as written  as written           no <|channel|>  as written  ""
    mlx-lm        markup      markup               markup          markup      text
    ============  ==========  ===================  ==============  ==========  =============

    (``markup``: ``<|channel|>final<|message|>`` and the form's text: mlx-lm has no Harmony
    handling.) Without tools the same, but ``vllm-mlx`` not streamed returns ``channel`` as
    ``no <|channel|>``, ``stripped`` as ``text`` and the other forms as written. Why the
    ``stripped`` cells differ:

    * ``vllm``: no message completes, so vLLM's ``flush()`` decodes the raw tokens as content at
      EOS, the ``<|endoftext|>`` that ends a scripted completion included (switch
      ``end_of_script_eos``; vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); ``openai``'s
      reference has no such token.
    * ``sglang``: its text fallback (``TextStrategy``, sgl-project/sglang@v0.5.23
      python/sglang/srt/parser/harmony_parser.py; :mod:`mockoss.profiles.sglang.harmony_fallback`)
      reads the leading ``commentary`` as a header word and returns the rest.
    * ``ollama``: ``""``, no error, no ``server_log`` line: the parser starts a header at the
      implicit ``<|start|>assistant`` and the ``<|message|>`` that would end it never comes
      (ollama/ollama:harmony/harmonyparser.go@fb307609, :mod:`mockoss.profiles.ollama.parser`).
      ``lmstudio`` answers ``""`` too, with no ``server_log`` line.
    * ``llamacpp``: HTTP 500 ``The model produced output that does not match the expected
      peg-native format`` (streamed: an error event after HTTP 200): the text matches no rule of
      the grammar (ggml-org/llama.cpp common/parsers/gpt-oss.cpp@2629d7b5). ``llamacpp@b7756`` and
      earlier (the regex parser) return the whole text as ``content`` instead.
    * ``vllm-mlx`` with tools, not streamed, deletes ``to=functions.NAME`` from every form but
      ``json`` (waybarrios/vllm-mlx@v0.6.0:vllm_mlx/tool_parsers/harmony_tool_parser.py).

    Raises:
        ValueError: an unknown ``form`` (the message lists the forms).
    """
    if form not in LEAK_FORMS:
        raise ValueError(f"unknown leak form {form!r}; forms: {', '.join(LEAK_FORMS)}")
    messages = ((reasoning(thinking),) if thinking is not None else ()) + (tool_call(name, arguments),)
    return Step(messages=messages, fault=dict(LEAK_FORMS[form]))


def raw(text: str) -> Step:
    """A completion given as raw Harmony text, used verbatim (malformed output is possible), e.g.
    ``raw('<|channel|>final<|message|>Hi<|return|>')``."""
    return Step(raw=text)


def fault(kind: str, *messages: Message | Step, **params: Any) -> Step:
    """``messages`` through fault ``kind`` (:data:`mockoss.harmony.faults.FAULTS`, ``mockoss faults``),
    e.g. ``fault("duplicate_recipient", tool_call("bash", {"command": "ls"}))``. A step made of
    messages only (a sum, ``analysis("a") + final("b")``) gives its messages. Steps with a fault
    are not tool-checked (the mismatch is the point).

    Raises:
        mockoss.harmony.faults.FaultError: unknown kind or parameter.
        TypeError: no messages, or a step with more than messages (a fault, times, an error...).
        ValueError: a message's ``recipient_position`` differs from the fault's (:meth:`Step.with_fault`).
    """
    if not messages:
        raise TypeError("fault() takes the messages it applies to, e.g. fault('truncated', final('Hello'))")
    flat: list[Message] = []
    for item in messages:
        if isinstance(item, Step):
            if not item._messages_only():
                raise TypeError(
                    "fault() takes messages, or a step made of messages only (e.g. analysis('a') + final('b')); "
                    "this step has more (a fault, times, note, error, raw text...)"
                )
            flat.extend(item.messages)
        else:
            flat.append(item)
    return Step(messages=tuple(flat)).with_fault(kind, **params)


def error(status: int, message: str = "Scripted error", *, retry_after: int | None = None) -> Step:
    """An HTTP error in the profile's error shape instead of a completion, e.g. ``error(429, retry_after=2)``."""
    data: dict[str, Any] = {"status": status, "message": message}
    if retry_after is not None:
        data["retry_after"] = retry_after
    return Step(error=data)
