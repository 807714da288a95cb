"""Fault kinds that break one message's header (recipient, channel, content type).

Examples below use the completion ``analysis "Need to list files."`` then
``commentary to=functions.bash <|constrain|>json {"cmd":["ls"]}``, with the default
``recipient_position: channel``; "parser" is the Harmony ``StreamableParser`` with
``Role.ASSISTANT`` and ``strict=True``, as vLLM runs it. Outcomes are openai-harmony 0.0.8's where the
kind was written against it; where oss-harmony 0.0.11 (installed, what vLLM 0.32/0.33 ship) differs
(a header holding ``<|channel|>`` twice), the docstring says so (mockoss.harmony.library).
"""

from __future__ import annotations

import dataclasses

from mockoss.harmony.faults_core import CALL_TEXT, Job, Param, fault_kind, join

__all__: list[str] = []

HARMONY_PARSER = "openai/harmony:src/encoding.rs@ec7606d (parse_header_from_string)"


def _non_empty(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


@fault_kind(
    "invented_recipient",
    sources=(
        'vllm-project/vllm PR "[Bugfix][Responses] Ignore Harmony recipients when no tools are configured"',
        "vllm-project/vllm#27385",
    ),
    params=(
        Param("recipient", str, "tool.mcp", "the invented recipient", check=_non_empty),
        Param("channel", str, "commentary", "channel of the message that addresses it", check=_non_empty),
    ),
)
def invented_recipient(job: Job, recipient: str, channel: str) -> str:
    """The model addresses a tool nobody declared: the target becomes ``<|channel|>{channel} to={recipient}``.

    Params: ``recipient`` (default ``tool.mcp``), ``channel`` (default ``commentary``); content and
    content type are kept and the message ends with ``<|call|>``. Shape:
    ``<|start|>assistant<|channel|>commentary to=tool.mcp<|message|>{...}<|call|>``.
    Parser: a well-formed message with recipient ``tool.mcp``; vLLM's Responses API turns it into an
    ``mcp_call`` (server_label ``tool``, name ``mcp``) even when the request declared no tools.
    """
    return join(job.render_target(recipient=recipient, channel=channel))


@fault_kind(
    "duplicate_recipient",
    sources=("vllm-project/vllm#51977", "openai/harmony#38", "vllm-project/vllm#23567"),
    params=(
        Param(
            "recipient", str, None, "the second recipient; default: the same one again", nullable=True, check=_non_empty
        ),
    ),
)
def duplicate_recipient(job: Job, recipient: str | None) -> str:
    """Two ``to=`` in one header: ``to=functions.bash to=functions.bash``.

    Params: ``recipient``, the second recipient (default: the target's own). The target must be a
    tool call. Shape: ``<|channel|>commentary to=functions.bash to=functions.bash <|constrain|>json``.
    Parser: ``HarmonyError`` ``unexpected tokens remaining in message header:
    Some("to=functions.bash")`` (the first ``to=`` is left over) at ``<|message|>``; vLLM answers
    HTTP 500 (400 in releases that map RuntimeError to BadRequestError).
    """
    first = job.recipient()
    return join(job.render_target(recipient=f"{first} to={recipient or first}"))


@fault_kind("space_after_constrain", sources=(HARMONY_PARSER, "vllm-project/vllm#23567"))
def space_after_constrain(job: Job) -> str:
    """A space after ``<|constrain|>``: content type ``<|constrain|> json`` instead of ``<|constrain|>json``.

    No params. The format after ``<|constrain|>`` is the target's (``json`` when it has no
    ``<|constrain|>`` content type). Shape: ``… to=functions.bash <|constrain|> json<|message|>``.
    Parser, on a tool call: ``unexpected tokens remaining in message header: Some("to=functions.bash")``
    (``<|constrain|>`` and ``json`` become two header parts); without a recipient the lone
    ``<|constrain|>`` is read as the recipient and ``json`` as the content type.
    """
    current = job.message.content_type or "json"
    fmt = current.removeprefix("<|constrain|>").strip() or "json"
    return join(job.render_target(content_type=f"<|constrain|> {fmt}"))


@fault_kind(
    "extra_content_type",
    sources=("openai/harmony#60", "openai/harmony#38", HARMONY_PARSER),
    params=(Param("extra", str, "code", "the token written before the content type", check=_non_empty),),
)
def extra_content_type(job: Job, extra: str) -> str:
    """An extra word before the content type: ``to=functions.bash code <|constrain|>json``.

    Params: ``extra`` (default ``code``, the built-in tools' content type). The content type
    becomes ``{extra} {content_type}`` (``{extra} json`` when the target has none, e.g. ``code json``).
    Shape: ``<|channel|>commentary to=functions.bash code <|constrain|>json<|message|>``. Parser, on a tool call: ``unexpected tokens remaining in message header: Some("to=functions.bash")``;
    openai/harmony#60 shows the same error with a stray ``<|constrain|>response``.
    """
    return join(job.render_target(content_type=f"{extra} {job.message.content_type or 'json'}"))


@fault_kind(
    "constrain_as_recipient",
    sources=("openai/harmony#144", "vllm-project/vllm#45570", "vllm-project/vllm PR #35906"),
    params=(
        Param(
            "content_type",
            str,
            "<|constrain|>json",
            "the content type written with no recipient before it",
            check=_non_empty,
        ),
    ),
)
def constrain_as_recipient(job: Job, content_type: str) -> str:
    """A content type with no recipient, which the parser reads as the recipient.

    Params: ``content_type`` (default ``<|constrain|>json``; ``json`` reproduces vLLM's structural-tag
    form). The target loses its recipient and keeps its channel and stop token (``<|call|>`` for a
    tool call, ``<|return|>`` for a final). Shapes: ``<|channel|>final <|constrain|>json<|message|>``
    (structured output, openai/harmony#144) and ``<|channel|>commentary <|constrain|>json<|message|>``.
    Parser: no error; recipient ``<|constrain|>json``, content_type ``None``. vLLM's Responses API then
    returns an ``mcp_call`` named ``<|constrain|>json`` instead of a message (vllm#45570).
    """
    segments = job.render_target(recipient=None, content_type=content_type)
    if job.message.recipient:
        segments[job.target] = dataclasses.replace(segments[job.target], stop=CALL_TEXT)
    return join(segments)


@fault_kind(
    "control_tokens_in_recipient",
    sources=("vllm-project/vllm#32587", "vllm-project/vllm PR #31677", "vllm-project/vllm PR #32633"),
    params=(
        Param(
            "suffix",
            str,
            None,
            "text glued to the recipient; default `<|channel|>{channel}`",
            nullable=True,
            check=_non_empty,
        ),
    ),
)
def control_tokens_in_recipient(job: Job, suffix: str | None) -> str:
    """Control tokens glued to the tool name: ``to=functions.bash<|channel|>commentary``.

    Params: ``suffix`` (default ``<|channel|>`` + the target's channel). The target must be a tool
    call. Shape: ``<|channel|>commentary to=functions.bash<|channel|>commentary <|constrain|>json``.
    Parser: no error; openai-harmony 0.0.8: recipient ``functions.bash<|channel|>commentary`` (vLLM's
    tool call is then named ``bash<|channel|>commentary``, vllm#32587); oss-harmony 0.0.11 cuts the
    ``<|channel|>commentary`` out: recipient ``functions.bash``. With ``recipient_position: role``
    the text equals ``doubled_channel``'s, and the parser reads it the same way.
    """
    recipient = job.recipient()
    glued = suffix if suffix is not None else f"<|channel|>{job.message.channel or 'commentary'}"
    return join(job.render_target(recipient=recipient + glued))


@fault_kind(
    "doubled_channel",
    sources=("vllm-project/vllm#32587", HARMONY_PARSER),
    params=(
        Param(
            "channel", str, None, "the second channel value; default: the same channel", nullable=True, check=_non_empty
        ),
    ),
)
def doubled_channel(job: Job, channel: str | None) -> str:
    """A second ``<|channel|>`` right after the first: ``<|channel|>commentary<|channel|>commentary``.

    Params: ``channel`` (default: the target's channel). The target must have a channel. Shape:
    ``<|start|>assistant<|channel|>commentary<|channel|>commentary to=functions.bash <|constrain|>json``. Parser:
    openai-harmony 0.0.8: on the first message the second marker becomes the recipient
    (``<|channel|>analysis``); on a later one it glues to the role: ``Unknown role:
    assistant<|channel|>final`` (HarmonyError) without a recipient, or, on a tool call, a message of
    role ``tool`` named ``assistant<|channel|>commentary`` (vLLM drops it as not from the
    assistant). oss-harmony 0.0.11 cuts every ``<|channel|>NAME`` out of the header: the message
    parses as if the marker were not doubled.
    """
    own = job.message.channel
    if not own:
        raise job.fail("has no channel to double")
    segments = job.segments()
    segment = segments[job.target]
    marker = f"<|channel|>{own}"
    cut = segment.header.index(marker) + len(marker)
    header = f"{segment.header[:cut]}<|channel|>{channel or own}{segment.header[cut:]}"
    segments[job.target] = dataclasses.replace(segment, header=header)
    return join(segments)


@fault_kind("empty_channel", sources=(HARMONY_PARSER,))
def empty_channel(job: Job) -> str:
    """A channel marker with no value: ``<|channel|><|message|>``.

    No params; the target's channel is emptied, the rest kept, its stop token included (a recipient
    stays after the role, since there is no channel to follow). Shapes: ``<|start|>assistant<|channel|><|message|>2 + 2 = 4.<|return|>``,
    ``<|start|>assistant to=functions.bash<|channel|> <|constrain|>json<|message|>``. Parser: ``HarmonyError`` ``channel
    marker present but no channel value found in header`` at ``<|message|>``.
    """
    stop = job.segments()[job.target].stop
    segments = job.render_target(channel="")
    segments[job.target] = dataclasses.replace(segments[job.target], stop=stop)
    return join(segments)
