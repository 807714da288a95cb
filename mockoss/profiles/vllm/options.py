"""vLLM request options and serve flags that change what a gpt-oss completion looks like.

Each option is emulated, or refused with a clear 400; none is accepted and ignored.

* ``ignore_eos: true`` (``SamplingParams.ignore_eos``): the engine no longer stops at the Harmony
  stop tokens (``<|return|>``, ``<|call|>`` are EOS ids of gpt-oss's generation config), so a
  model that ends its turn before the token limit keeps generating. vllm-project/vllm#50690
  (vLLM 0.18.0 and 0.26.0, ``openai-harmony`` 0.0.8): the chat completion then fails with HTTP
  500 ``Unexpected token 200002 while expecting start token 200006``, i.e. the model emitted
  ``<|return|>`` again where the parser expected ``<|start|>``. :func:`ignore_eos_completion`
  reproduces exactly that: after the scripted stop token the "model" repeats it until the token
  limit (at most :data:`IGNORE_EOS_TAIL` tokens when the request sets none; what a real model
  emits there is unverified), and the profile's own parser rules decide what the client sees
  (the 0.26 parser raises, so ``harmony_error_status``; a parser that skips bad tokens ends
  ``length``).
* ``--stream-interval N`` (the profile's ``stream_interval`` switch) and the request's
  ``stream_interval`` (the larger wins, ``v1/engine/output_processor.py`` in vLLM 0.32.0): the
  output processor sends the first token alone, then every N tokens, then the rest when the
  request finishes. :func:`regroup_deltas` merges the chat stream's per-token deltas the same way;
  with ``stream_interval_channels="last"`` a merged chunk is classified by its last token
  (vllm-project/vllm#32125, #31501, PR #36011: the analysis tail lands in ``content``), with
  ``"per_token"`` each token keeps its channel (vLLM 0.32.0 ``HarmonyParser.process_chunk``).
  A chunk that ends where the parser has no channel (inside a header, after an end token) goes
  to the kind of its last text-carrying token (an assumption, unverified). The Responses stream is not
  regrouped, nor are the 2025 chat paths and ``/v1/completions``: the request log says so
  (:func:`interval_note`).
* ``skip_special_tokens`` and ``include_stop_str_in_output`` change the detokenised text, which
  vLLM's Harmony chat and Responses paths do not use (vLLM 0.32.0
  ``entrypoints/openai/chat_completion/serving.py`` and ``parser/harmony.py``: content comes from
  the token ids through ``HarmonyParser``), so they leave chat and Responses output unchanged;
  ``/v1/completions`` honours them (:mod:`mockoss.profiles.vllm.completions`).
* ``n`` > 1 is refused by the request schema (one scripted completion per request).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockoss.harmony.completion import CALL, RETURN, Completion, Emission

if TYPE_CHECKING:
    from mockoss.profiles.vllm.chat_plan import Plan, TokenDelta

__all__ = [
    "IGNORE_EOS_TAIL",
    "IGNORE_EOS_TAIL_MAX",
    "RECOVERY_WARNING",
    "OptionError",
    "ignore_eos_completion",
    "interval_note",
    "recovery_log",
    "regroup_deltas",
    "stream_interval",
]

#: What vLLM logs when ``HarmonyParser.flush()`` recovers the raw text of a message left open at
#: the end (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, ``logger.warning`` in ``flush``).
RECOVERY_WARNING = (
    "WARNING [vllm/parser/harmony.py] Harmony parser ended in a non-terminal state; returning the recovered raw output."
)

#: Tokens the "model" keeps emitting after its stop token under ``ignore_eos`` when the request
#: sets no token limit (a real model runs to ``max_model_len``; bounded here to keep memory small).
IGNORE_EOS_TAIL = 64
#: Most tokens the tail may add even when ``max_tokens`` asks for more, so one request cannot make
#: the server parse millions of tokens (the reply then ends ``length`` early; a real server would run
#: to ``max_tokens``).
IGNORE_EOS_TAIL_MAX = 1024


class OptionError(ValueError):
    """A request option vLLM's request schema rejects (HTTP 400); ``param`` names the field."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.param = param


def _flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise OptionError(f"Invalid request: {name}: Input should be a valid boolean", name)
    return value


def stream_interval(body: Mapping[str, Any], server: int) -> int:
    """The stream interval of a request: ``max(request stream_interval, --stream-interval)``.

    Raises:
        OptionError: ``stream_interval`` is not an integer ≥ 1 (vLLM: ``Field(ge=1)``).
    """
    value = body.get("stream_interval")
    if value is None:
        return server
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError("Invalid request: stream_interval: Input should be a valid integer", "stream_interval")
    if value < 1:
        raise OptionError("Invalid request: stream_interval: Input should be greater than or equal to 1", "stream_interval")
    return max(value, server)


@dataclass(frozen=True, slots=True)
class _NoStopCompletion(Completion):
    """A completion whose emission does not stop at ``<|return|>``/``<|call|>`` (``ignore_eos``)."""

    def emit(self, max_tokens: int | None = None) -> Emission:
        if max_tokens is not None:
            max_tokens = self.cap(max_tokens)
        key = ("emit", max_tokens)
        cached = self._memo.get(key)
        if cached is None:
            # The tail runs to the token limit (or to IGNORE_EOS_TAIL): the engine stops on length.
            limit = len(self.tokens) if max_tokens is None else max(0, max_tokens)
            cached = Emission(tokens=self.tokens[:limit], finish_reason="length")
            self._memo[key] = cached
        return cached  # type: ignore[return-value]


def ignore_eos_completion(completion: Completion, body: Mapping[str, Any], max_tokens: int | None) -> Completion:
    """``completion`` as the engine emits it for ``body``: unchanged unless ``ignore_eos`` is true
    and the scripted output ends with a stop token before ``max_tokens``; then the stop token is
    repeated up to ``max_tokens`` (at most :data:`IGNORE_EOS_TAIL_MAX` more tokens; without a limit
    :data:`IGNORE_EOS_TAIL` more), and the emission
    ignores stop tokens. Memoised on ``completion``.

    Raises:
        OptionError: ``ignore_eos`` is not a boolean.
    """
    if not _flag(body, "ignore_eos"):
        return completion
    emitted = completion.emit(max_tokens)
    if emitted.finish_reason != "stop" or not emitted.tokens or emitted.tokens[-1] not in (RETURN, CALL):
        return completion
    head = emitted.tokens
    total = min(max_tokens, len(head) + IGNORE_EOS_TAIL_MAX) if max_tokens is not None else len(head) + IGNORE_EOS_TAIL
    key = ("vllm.ignore_eos", total)  # the tokens it makes: every larger max_tokens shares them (issue 9 review, finding 2)
    cached = completion._memo.get(key)
    if cached is None:
        tail = (head[-1],) * max(0, total - len(head))
        tokens = head + tail
        cached = _NoStopCompletion(text=completion.text, tokens=tokens)
        completion._memo[key] = cached
    return cached  # type: ignore[return-value]


def _tool_entries(tools: Sequence[tuple[int, str | None, str]]) -> list[tuple[int, str | None, str]]:
    """The ``tool_calls`` entries ``HarmonyParser.parse_delta`` builds for one chunk from its
    tokens' tool deltas (vllm-project/vllm@v0.33.0:vllm/parser/harmony.py, same at v0.32.0): a
    call's first delta opens an entry with its id, name and that delta's arguments; every later
    non-empty arguments delta is appended to the last entry; one that comes before any entry of
    the chunk (a call begun in an earlier chunk) opens an entry with only its index and arguments.
    """
    entries: list[tuple[int, str | None, str]] = []
    for index, name, arguments in tools:
        if name is not None:
            entries.append((index, name, arguments))
        elif not arguments:
            continue
        elif entries:
            last = entries[-1]
            entries[-1] = (last[0], last[1], last[2] + arguments)
        else:
            entries.append((index, None, arguments))
    return entries


def _merge(group: Sequence[TokenDelta], mode: str, last_kind: str | None) -> TokenDelta | None:
    from mockoss.profiles.vllm.chat_plan import TokenDelta

    tools = [t for d in group if d.tool is not None for t in (d.tool, *d.more_tools)]
    content = "".join(d.content for d in group)
    reasoning = "".join(d.reasoning for d in group)
    if mode != "last":
        entries = _tool_entries(tools)
        return TokenDelta(content, reasoning, entries[0] if entries else None, tuple(entries[1:]))
    if len({t[0] for t in tools}) > 1:
        return None  # "last" (before per-token channels): how such a chunk looked is unknown; per token
    tool = None
    if tools:
        name = next((t[1] for t in tools if t[1] is not None), None)
        tool = (tools[0][0], name, "".join(t[2] for t in tools))
    text = "".join(d.content + d.reasoning + (d.tool[2] if d.tool else "") for d in group)  # token order
    if last_kind not in ("CONTENT", "REASONING", "TOOL"):
        # No channel at the chunk's end (inside a header, or just after an end token): the kind of
        # the last token that carried text (an assumption: the reports show no lost text).
        last = next((d for d in reversed(group) if d.content or d.reasoning or d.tool is not None), None)
        last_kind = None if last is None else "TOOL" if last.tool is not None else "CONTENT" if last.content else "REASONING"
    if not text:
        return TokenDelta("", "", tool)
    if last_kind == "CONTENT":
        return TokenDelta(text, "", None)
    if last_kind == "TOOL" and tool is not None:
        return TokenDelta("", "", (tool[0], tool[1], text))
    return TokenDelta("", text, None)


def regroup_deltas(plan: Plan, interval: int, mode: str, kinds: Sequence[str] | None = None) -> Plan:
    """``plan`` with its per-token deltas merged into stream-interval chunks: token 0 alone, then
    ``interval`` tokens per chunk, the rest with the last token; each chunk's delta sits at its
    last token, the other positions are empty. Usage counts are unchanged.

    ``kinds`` (mode ``"last"``): the segment kind after each token (``"CONTENT"``,
    ``"REASONING"``, ``"TOOL"``, ``"IGNORE"``, from the parser's channel and recipient); a chunk's
    text goes to the kind of its last token, or, when that token has no channel (a header, an end
    token), to the kind of the last token that carried text.
    """
    if interval <= 1 or len(plan.deltas) <= 1:
        return plan
    from mockoss.profiles.vllm.chat_plan import TokenDelta

    empty = TokenDelta("", "", None)
    deltas = list(plan.deltas)
    out: list[TokenDelta] = [deltas[0]]
    for start in range(1, len(deltas), interval):
        group = deltas[start : start + interval]
        end = start + len(group) - 1
        last_kind = kinds[end] if kinds is not None and end < len(kinds) else None
        merged = _merge(group, mode, last_kind)
        if merged is None:
            out.extend(group)
        else:
            out.extend([empty] * (len(group) - 1) + [merged])
    return dataclasses.replace(plan, deltas=tuple(out))


def interval_note(profile: Any, endpoint: str, request: Any) -> str | None:
    """A request-log note when a stream interval > 1 applies where mockoss does not regroup the
    stream (the Responses stream, the 2025 chat paths, ``/v1/completions``), else ``None``.

    Raises:
        OptionError: a bad ``stream_interval`` (chat and completions requests carry the field).
    """
    interval = stream_interval(request.body, profile.stream_interval) if endpoint != "responses" else profile.stream_interval
    if interval <= 1 or not request.stream:
        return None
    if endpoint == "chat" and profile.chat_parser == "harmony_parser":
        return None  # regrouped by regroup_deltas
    where = {"responses": "the Responses stream", "completions": "/v1/completions"}.get(endpoint, f"the {profile.chat_parser} chat path")
    return (
        f"mockoss: stream_interval={interval} is not emulated for {where}: one chunk per token "
        "(vLLM sends several tokens per chunk; vllm-project/vllm#32125, PR #36011)"
    )


def recovery_log(profile: Any, endpoint: str, completion: Completion, request: Any) -> str | None:
    """:data:`RECOVERY_WARNING` when the chat reply carries raw text ``flush()`` recovered (the
    ``harmony_parser`` path with ``flush_raw_recovery``), else ``None``."""
    if endpoint != "chat" or profile.chat_parser != "harmony_parser" or not profile.flush_raw_recovery:
        return None
    from mockoss.profiles.vllm.chat_plan import plan_completion

    skip = profile.harmony_errors == "skip"
    plan = plan_completion(completion, request.max_tokens, profile.strict, True, profile.harmony_library, skip)
    return RECOVERY_WARNING if plan.parsed is not None and plan.parsed.raw_recovered else None
