"""Fault kinds that work on o200k_harmony token positions: truncation and special-token stripping."""

from __future__ import annotations

import functools

from openai_harmony import HarmonyError

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.faults_core import FaultError, Job, Param, fault_kind, join

__all__: list[str] = []


@functools.cache
def special_token_ids() -> frozenset[int]:
    """Ids of every o200k_harmony special token (``<|start|>``…, the reserved ones too)."""
    encoding = load_encoding()
    return frozenset(encoding.encode(token, allowed_special="all")[0] for token in encoding.special_tokens_set)


@fault_kind(
    "truncated",
    sources=("vllm-project/vllm#45736", "openai/harmony:src/encoding.rs@ec7606d (process_eos)"),
    params=(
        Param("at", str, "content", "which part of the target message is cut", choices=("header", "content")),
        Param(
            "tokens",
            int,
            None,
            "tokens of that part that are kept; default half of them (at least 1)",
            minimum=0,
            nullable=True,
        ),
    ),
)
def truncated(job: Job, at: str, tokens: int | None) -> str:
    """Output cut off inside a message, by token position, as ``max_tokens`` cuts it.

    Params: ``at`` ``header`` or ``content`` (default), ``tokens``: how many tokens of that part of the
    target survive. Header tokens are counted after ``<|start|>`` (``assistant`` included; the first
    message has no role token); content tokens after ``<|message|>``. Later messages are dropped.
    Shapes: ``…<|start|>assistant<|channel|>commentary to=functions`` (header),
    ``…<|constrain|>json<|message|>{"cmd":`` (content). Parser: no ``process`` error; at EOS a cut
    header raises ``Unexpected EOS while waiting for message header to complete``, a cut content is
    flushed as a complete message (vLLM's ``flush()`` then returns the raw text, vllm#45736).
    The text carries no finish reason: ``Completion.from_text(text).emit()`` reports ``stop``; serve
    the untruncated completion with ``max_tokens`` to get ``length``.
    """
    encoding = load_encoding()
    segments = job.segments()
    segment = segments[job.target]
    before = join(segments[: job.target])
    if at == "header":
        kept = before + ("<|start|>" if segment.start else "")
        part = encoding.encode(segment.start.removeprefix("<|start|>") + segment.header, allowed_special="all")
    else:
        kept = before + segment.start + segment.header + "<|message|>"
        part = encoding.encode(segment.content, allowed_special="all")
    count = (max(1, len(part) // 2) if part else 0) if tokens is None else tokens
    if count > len(part):
        raise FaultError("tokens", f"message {job.target} has only {len(part)} {at} token(s), cannot keep {count}")
    try:
        text = kept + encoding.decode_utf8(part[:count])
    except HarmonyError:  # the cut falls inside a UTF-8 character
        raise FaultError(
            "tokens", f"cutting after {count} {at} token(s) splits a character; choose another count"
        ) from None
    if not text:
        raise FaultError("tokens", f"keeping {count} {at} token(s) of message {job.target} leaves an empty completion")
    full = encoding.encode(join(segments), allowed_special="all")
    cut = encoding.encode(text, allowed_special="all")
    if cut != full[: len(encoding.encode(kept, allowed_special="all")) + count]:  # defensive: no known case
        raise FaultError(
            "tokens", f"cutting after {count} {at} token(s) does not re-tokenize as a prefix; choose another count"
        )
    return text


@fault_kind(
    "special_tokens_stripped",
    sources=("oobabooga/textgen#7374", "thinking-machines-lab/tinker-cookbook#239"),
    targets=False,
)
def special_tokens_stripped(job: Job) -> str:
    """The whole completion with every special token removed, as a server with ``skip_special_tokens`` shows it.

    No params. Shape: ``analysisNeed to list files.assistantcommentary to=functions.bash json{"cmd":["ls"]}``
    or ``analysisUser asks….assistantfinal2 + 2 = 4.`` (the oobabooga/textgen#7374 symptom). Parser:
    every token is header text and no ``<|message|>`` ever comes: at EOS ``Unexpected EOS while waiting
    for message header to complete``.
    """
    encoding = load_encoding()
    specials = special_token_ids()
    tokens = encoding.encode(join(job.segments()), allowed_special="all")
    return encoding.decode_utf8([t for t in tokens if t not in specials])
