"""What a correct server makes of a gpt-oss completion: the rules the public fixes converge on.

Each rule, and the public change it takes from:

1. ``<|constrain|>`` is a content type, never a recipient: a recipient is cut at its first
   ``<|constrain|>`` (vLLM ``HarmonyParser._normalize_recipient``, ``vllm/parser/harmony.py@053e68ec``;
   openai/harmony#144, vllm-project/vllm#45570 and PR #45571). ``<|channel|>final
   <|constrain|>json<|message|>{…}`` is a final answer.
2. Control tokens never reach a tool name: a recipient is cut at its first ``<|``, so
   ``functions.bash<|channel|>commentary`` calls ``bash`` (vllm-project/vllm PR #35906; #32587,
   #31677).
3. With no tools declared, recipients are ignored and messages are classified by channel alone
   (vLLM "[Bugfix][Responses] Ignore Harmony recipients when no tools are configured"): an
   invented call to ``tool.mcp`` is an ordinary message, not an ``mcp_call``.
4. A ``HarmonyError`` never fails the request: the messages completed before it are kept and the
   raw text of the rest of the output (from the failing message's start; special tokens kept as
   text, the final stop token dropped) becomes a final-channel message, as vLLM's
   ``HarmonyParser.flush()`` already does at EOS (vllm-project/vllm#45736 follow-up) and as the
   open fix PRs #47350 and #52055 do mid-stream (vllm-project/vllm#46464, #51977). A header left
   unfinished because the token limit cut the output is not malformed output: it is dropped.

The rules are applied by rebuilding the completion from the cleaned messages with openai-harmony's
renderer (:class:`NormalisedCompletion`); the vLLM profile's surfacing code then runs unchanged
on that canonical completion. Usage therefore counts the canonical tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openai_harmony import Message, Role

from mockoss.harmony import (
    Completion,
    Emission,
    ParserTrace,
    load_encoding,
)
from mockoss.harmony.completion import CALL, END, RETURN, START_ASSISTANT, Memo

__all__ = ["NormalisedCompletion", "clean_recipient", "normalised"]

_CONSTRAIN = "<|constrain|>"
_CONTROL = "<|"


def clean_recipient(recipient: str | None, *, tools_declared: bool) -> str | None:
    """Rules 1–3 for one recipient: ``None`` when it is only a misread content type, when no
    tools are declared, or when nothing is left; otherwise cut at ``<|constrain|>`` and at the
    first control token, then stripped."""
    if not recipient or not tools_declared:
        return None
    for marker in (_CONSTRAIN, _CONTROL):
        cut = recipient.find(marker)
        if cut != -1:
            recipient = recipient[:cut]
    return recipient.strip() or None


def _clean_content_type(content_type: str | None) -> str | None:
    """Keep ``<|constrain|>`` + the type word; drop anything from a further control token on."""
    if not content_type:
        return None
    prefix = _CONSTRAIN if content_type.startswith(_CONSTRAIN) else ""
    body = content_type[len(prefix) :]
    cut = body.find(_CONTROL)
    body = (body if cut == -1 else body[:cut]).strip()
    return prefix + body if body else None


def _clean(message: Message, tools_declared: bool) -> Message:
    recipient = clean_recipient(message.recipient, tools_declared=tools_declared)
    text = message.content[0].text if message.content else ""
    out = Message.from_role_and_content(Role.ASSISTANT, text)
    if message.channel:
        out = out.with_channel(message.channel)
    if recipient is not None:
        out = out.with_recipient(recipient)
        content_type = _clean_content_type(message.content_type)
        if content_type:
            out = out.with_content_type(content_type)
    return out


def _raw_tail(trace: ParserTrace) -> str:
    """The rest of the output from the failing message's start, as text (rule 4)."""
    end = trace.error_index + 1 if trace.error_index is not None else len(trace.tokens)
    tail = list(trace.tokens[end - len(trace.pending_tokens) :])
    if tail and tail[-1] in (RETURN, CALL):
        tail.pop()
    return load_encoding().decode(tail)


def _canonical_tokens(messages: list[Message], open_last: bool) -> tuple[int, ...]:
    encoding = load_encoding()
    tokens: list[int] = []
    for position, message in enumerate(messages):
        rendered = list(encoding.render(message))
        if position == 0 and tuple(rendered[:2]) == START_ASSISTANT:
            rendered = rendered[2:]
        if message.channel == "final" and message.recipient is None and rendered and rendered[-1] == END:
            rendered[-1] = RETURN
        if open_last and position == len(messages) - 1 and rendered:
            rendered.pop()
        tokens.extend(rendered)
    return tuple(tokens)


@dataclass(frozen=True, slots=True)
class NormalisedCompletion:
    """A completion as a correct server sees it, for the vLLM surfacing code (duck-typed like
    :class:`~mockoss.harmony.Completion`: ``text``, ``tokens``, ``cap``, ``emit``, ``trace``, ``_memo``).

    Attributes:
        text, tokens: the canonical completion rendered from the cleaned messages.
        finish_reason: the original emission's (``"length"`` when cut by the token limit).
    """

    text: str
    tokens: tuple[int, ...]
    finish_reason: str
    _memo: dict[object, object] = field(default_factory=Memo, compare=False, hash=False, repr=False)

    def cap(self, max_tokens: int | None) -> None:
        """``None`` for every limit: the limit is already applied, :meth:`emit` and :meth:`trace`
        ignore it (:meth:`mockoss.harmony.Completion.cap`)."""

    def emit(self, max_tokens: int | None = None) -> Emission:
        """The canonical tokens, with the original finish reason (the limit is already applied)."""
        return Emission(tokens=self.tokens, finish_reason=self.finish_reason)  # type: ignore[arg-type]

    def trace(
        self, *, max_tokens: int | None = None, strict: bool = True, library: str = "oss-harmony", skip_errors: bool = False
    ) -> ParserTrace:
        """The parser's trace of the canonical tokens (``max_tokens`` is already applied); ``library``
        and ``skip_errors`` as in :meth:`mockoss.harmony.Completion.trace` (the canonical tokens are
        well-formed, so they change nothing here)."""
        key = ("trace", strict, library, skip_errors)
        cached = self._memo.get(key)
        if cached is None:
            from mockoss.harmony.library import parse_with

            cached = self._memo[key] = parse_with(self.tokens, strict=strict, library=library, skip_errors=skip_errors)  # type: ignore[arg-type]
        return cached  # type: ignore[return-value]


def normalised(completion: Completion, max_tokens: int | None, *, tools_declared: bool) -> NormalisedCompletion:
    """Apply the four rules to ``completion`` cut at ``max_tokens``; memoised on the completion."""
    max_tokens = completion.cap(max_tokens)  # every limit that does not cut the answer shares one entry (Completion.cap)
    key = ("openai.normalised", max_tokens, tools_declared)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    trace = completion.trace(max_tokens=max_tokens, strict=True)
    kept = [m for m in trace.messages if m.author.role == Role.ASSISTANT]
    messages = [_clean(m, tools_declared) for m in kept]
    open_last = False
    cut_in_header = trace.error is None and trace.eos_error is not None and emission.finish_reason == "length"
    if (trace.error is not None or trace.eos_error is not None) and not cut_in_header:
        raw = _raw_tail(trace)
        if raw:
            messages.append(Message.from_role_and_content(Role.ASSISTANT, raw).with_channel("final"))
    elif trace.eos_messages:
        messages += [_clean(m, tools_declared) for m in trace.eos_messages if m.author.role == Role.ASSISTANT]
        open_last = True
    tokens = _canonical_tokens(messages, open_last) if messages else ()
    text = load_encoding().decode(list(tokens)) if tokens else ""
    result = NormalisedCompletion(text=text, tokens=tokens, finish_reason=emission.finish_reason)
    # As much room as the completion's own memo (a long answer's is sized by its tokens,
    # MEMO_BYTES_PER_TOKEN): else a long answer's plans and stream rewrites were never kept.
    result._memo.limit = max(result._memo.limit, completion._memo.limit)  # type: ignore[attr-defined]
    if tokens == emission.tokens and trace.error is None:
        # A well-formed completion renders back to its own tokens: the parser's trace of them is
        # the one just made (oss-harmony parses the same with and without skipping errors when
        # none occurs, mockoss.harmony.library.parse_with), not a second parse of every token.
        for skip in (False, True):
            result._memo[("trace", True, "oss-harmony", skip)] = trace
    completion._memo[key] = result
    return result
