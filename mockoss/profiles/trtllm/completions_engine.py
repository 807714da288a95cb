"""What TensorRT-LLM's engine and detokenizer hand ``POST /v1/completions``
(:mod:`mockoss.profiles.trtllm.completions`): the generated ids with the executor's stop handling
(:func:`engine_output`), the text they decode to (:func:`detokenized`) and the streamed
``text_diff`` per engine response (:func:`stream_texts`). Its one job is the engine side, no wire
format: the route module builds the replies from these. Sources are the route module's
(``tensorrt_llm/executor/result.py``, ``llmapi/tokenizer.py`` ``decode_incrementally``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import FIRST_SPECIAL, load_encoding
from mockoss.profiles.trtllm.chat import RETURN

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["EngineOutput", "detokenized", "engine_output", "kept_ids", "stream_texts"]

#: generation_config.json's ``eos_token_id`` besides ``<|return|>``: ``<|endoftext|>``, ``<|call|>``.
_CONFIG_STOPS = (199999, 200012)
#: Completions shorter than this (tokens) get their engine output and text made per request: a
#: token-by-token stop search and a decode of a few hundred tokens cost less than a memo store.
_MEMO_FROM = 512


class EngineOutput:
    """What the executor hands the post-processor: ``emitted`` (tokens the engine generated,
    stop token included, for the response batches), ``tokens`` (the output ids), ``finish_reason``
    and ``stop_reason``."""

    __slots__ = ("emitted", "finish_reason", "stop_reason", "tokens")

    def __init__(self, emitted: tuple[int, ...], tokens: tuple[int, ...], finish_reason: str, stop_reason: int | None) -> None:
        self.emitted, self.tokens, self.finish_reason, self.stop_reason = emitted, tokens, finish_reason, stop_reason


def engine_output(completion: Completion, max_tokens: int | None, *, config_stops: bool, keep_stop: bool) -> EngineOutput:
    """The executor's stop handling (``executor/result.py``): the end id ``<|return|>`` is dropped;
    with ``config_stops`` the first ``<|endoftext|>`` or ``<|call|>`` ends generation as a stop word,
    trimmed unless ``keep_stop`` (``include_stop_str_in_output``). Memoised on the completion per
    effective limit (:meth:`~mockoss.harmony.Completion.cap`): the stop search runs token by token."""
    if len(completion.tokens) < _MEMO_FROM:  # made again for less than a memo store costs
        return _engine_output(completion, max_tokens, config_stops=config_stops, keep_stop=keep_stop)
    key = ("trtllm.engine", completion.cap(max_tokens), config_stops, keep_stop)
    cached = completion._memo.get(key)
    if cached is None:
        cached = _engine_output(completion, max_tokens, config_stops=config_stops, keep_stop=keep_stop)
        completion._memo[key] = cached
    return cached  # type: ignore[return-value]


def _engine_output(completion: Completion, max_tokens: int | None, *, config_stops: bool, keep_stop: bool) -> EngineOutput:
    emission = completion.emit(max_tokens)
    tokens = emission.tokens
    if config_stops:
        for i, token in enumerate(tokens):
            if token in _CONFIG_STOPS:
                return EngineOutput(tokens[: i + 1], tokens[: i + 1] if keep_stop else tokens[:i], "stop", token)
    if emission.finish_reason == "stop" and tokens and tokens[-1] == RETURN:
        return EngineOutput(tokens, tokens[:-1], "stop", None)
    return EngineOutput(tokens, tokens, emission.finish_reason, None)


def kept_ids(tokens: tuple[int, ...] | list[int], skip_special: bool) -> list[int]:
    """The ids the detokenizer turns into text: with ``skip_special`` the special tokens dropped."""
    return [t for t in tokens if t < FIRST_SPECIAL] if skip_special else list(tokens)


def stream_texts(tokens: tuple[int, ...], bounds: list[tuple[int, int, bool]], *, skip_special: bool) -> list[str]:
    """The ``text_diff`` of each engine response: Hugging Face ``DecodeStream.step`` per token
    (trtllm-serve's default incremental detokenizer below ``TLLM_STREAM_INTERVAL_THRESHOLD``): the
    ids since the last release are decoded; text not ending in U+FFFD is released. A cut character
    left at the end is never released (the HF path ignores ``flush``)."""
    encoding = load_encoding()
    pending: list[int] = []
    texts = []
    for start, stop, _ in bounds:
        diff = []
        for token in kept_ids(tokens[start:stop], skip_special):
            pending.append(token)
            text = encoding.decode(pending)
            if text and not text.endswith("\ufffd"):
                diff.append(text)
                pending = []
        texts.append("".join(diff))
    return texts


def detokenized(completion: Completion, out: EngineOutput, shape: tuple[Any, ...], skip: bool) -> str:
    """``out`` detokenized, memoised on the completion per ``shape`` (what ``out`` is of:
    ``(completion.cap(limit), config_stops, keep_stop)``)."""
    if len(completion.tokens) < _MEMO_FROM:
        return load_encoding().decode(kept_ids(out.tokens, skip))
    key = ("trtllm.text", *shape, skip)
    cached = completion._memo.get(key)
    if cached is None:
        cached = load_encoding().decode(kept_ids(out.tokens, skip))
        completion._memo[key] = cached
    return cached  # type: ignore[return-value]
