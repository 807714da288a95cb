"""Scripted completions: what "the model" emits after ``<|start|>assistant``.

A completion is Harmony text with special tokens, tokenized with the real o200k_harmony encoding.
It is written either as structured :class:`openai_harmony.Message` objects, rendered by
openai-harmony's own renderer, or as raw text used verbatim so that malformed output is possible.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from openai_harmony import Message, Role

from mockoss.harmony.encoding import encode_text, load_encoding
from mockoss.harmony.layout import CACHED_TEXT_CHARS, RecipientPosition, render_assistant_message
from mockoss.harmony.lru import ENTRY_OVERHEAD, BytesLRU, approx_bytes

if TYPE_CHECKING:
    from mockoss.harmony.trace import ParserTrace

__all__ = [
    "COMPLETION_CACHE_BYTES", "MEMO_BYTES", "MEMO_BYTES_PER_TOKEN", "MEMO_CUT_ENTRIES", "MEMO_ENTRIES", "MEMO_TOTAL_BYTES", "Completion", "Cut", "Emission",
    "FinishReason", "Memo", "Tokens",
    "clear_completion_cache", "memo_bytes",
]  # fmt: skip

#: Token ids of ``<|start|>assistant``: how every rendered assistant message begins, and what a
#: prompt for completion already ends with.
START_ASSISTANT = (200006, 173781)
RETURN = 200002
CALL = 200012
END = 200007
#: ``<|endoftext|>``: in gpt-oss's ``generation_config.json`` ``eos_token_id`` with ``<|return|>``
#: and ``<|call|>``; what mockoss's scripted engines emit when a script runs out.
END_OF_TEXT = 199999

Tokens = tuple[int, ...]
FinishReason = Literal["stop", "length"]

#: Byte budget of the content-keyed completion cache: the same text or messages (a scenario the
#: pytest fixture reloads for every test, a template rendered to a text seen before) give the
#: same :class:`Completion`, whose memoised traces and plans are then computed once.
COMPLETION_CACHE_BYTES = 64 * 1024 * 1024
#: Entries one completion's memo keeps (parser traces, plans, reply templates: one per request
#: shape, mostly per ``max_tokens``); beyond it the oldest entry is dropped (:class:`Memo`).
MEMO_ENTRIES = 32
#: Bytes one memo holds at most (:class:`Memo`, sizes estimated by
#: :func:`mockoss.harmony.lru.approx_bytes`). What a request shape memoises is about 1-3.5 KB per
#: completion token (measured on a 3,500-token answer served by every profile, chat, Responses and
#: completions, streamed and not, three ``max_tokens``: 0.1 MB (mlx-lm) to 12 MB (ollama) for all
#: shapes together), so 8 MB holds a long answer's usual shapes; an entry bigger than this (a key or
#: template holding megabytes of request data) is not stored, only computed when asked for.
MEMO_BYTES = 8 * 1024 * 1024
#: A long completion's memo may hold this many bytes per token instead (at most a quarter of
#: :data:`MEMO_TOTAL_BYTES`): the usual shapes of a 40,000-token answer (chat, streamed chat,
#: Responses) take ~52 MB, so with 8 MB they were never kept and every request built its plan
#: again on the event loop, twice for a non-streamed chat (reply and recovery log): 0.5 s each,
#: every other client waiting (issue 9 review, seventh session).
MEMO_BYTES_PER_TOKEN = 2048
#: Bytes all memos together hold at most (every live completion's, and the per-generation memos
#: of :mod:`mockoss.profiles.ollama`): a store past it drops the storing memo's own oldest entries,
#: or is not kept. A memo gives its bytes back when it is freed (its completion is dropped).
MEMO_TOTAL_BYTES = 256 * 1024 * 1024
#: Entries of one memo whose key holds a :class:`Cut` (a ``max_tokens`` that cuts the answer short)
#: kept at most: a client cycling ``max_tokens`` through values below the answer's length makes a
#: new plan for each (its output differs), and those entries go first, oldest first, so the
#: uncut shapes' plans stay (issue 9 review, finding 2). Each cut request shape memoises about 4
#: entries (emission, trace, plan, reply template), so this keeps the last few cut limits.
MEMO_CUT_ENTRIES = 12

_memo_lock = threading.RLock()  # reentrant: dropping an entry can free a memo it holds (its __del__ takes the lock)
_memo_total = [0]  # bytes held by all memos (a list: mutated under _memo_lock)


def memo_bytes() -> int:
    """Bytes all memos hold now (estimated, as they count them)."""
    return _memo_total[0]


class Cut(int):
    """A ``max_tokens`` that cuts a completion's emission short (:meth:`Completion.cap`): an
    ``int`` (equal and hashing as its value) that marks a memo key as one of the cut ones,
    which :class:`Memo` keeps only :data:`MEMO_CUT_ENTRIES` of."""

    __slots__ = ()


def _is_cut(key: object) -> bool:
    return key.__class__ is tuple and any(part.__class__ is Cut for part in key)  # type: ignore[attr-defined]


class Memo(dict):  # type: ignore[type-arg]
    """``Completion._memo``: a dict of at most :data:`MEMO_ENTRIES` entries and :data:`MEMO_BYTES`
    bytes (``limit``), all memos together at most :data:`MEMO_TOTAL_BYTES`; the oldest inserted
    entry is dropped first. Every entry is a pure cache (recomputed when asked for again), but its
    key holds request fields: unbounded, 20,000 requests with distinct ``max_tokens`` grew a server
    by 390 MB, and a bound in entries alone lets a few entries holding megabytes of request data
    (an echoed tool list) each stay (issue 9: memory bounded in bytes).

    Reads are plain ``dict`` reads; a store estimates the entry's bytes
    (:func:`~mockoss.harmony.lru.approx_bytes` of key and value, completions and other memos it
    reaches not counted: they are accounted for on their own) and runs under a lock. An entry
    larger than ``limit`` is not stored. ``size`` is the bytes held.

    Entries whose key holds a :class:`Cut` (a truncating ``max_tokens``) are at most
    :data:`MEMO_CUT_ENTRIES`, and are dropped before the others when room is needed."""

    __slots__ = ("_costs", "_cut", "limit", "size")

    def __init__(self, limit: int | None = None) -> None:
        super().__init__()
        self.limit = MEMO_BYTES if limit is None else limit
        self.size = 0
        self._costs: dict[object, int] = {}
        self._cut: dict[object, None] = {}  # the held keys holding a Cut, oldest first

    def __setitem__(self, key: object, value: object) -> None:
        cost = approx_bytes((key, value), self.limit, _OPAQUE) + ENTRY_OVERHEAD
        with _memo_lock:
            old = self._costs.get(key)
            if old is not None and cost > self.limit:
                self._drop(key)
            if cost > self.limit:
                return  # too big to keep: computed again when asked for
            delta = cost - (old or 0)
            cut = _is_cut(key)
            if cut and old is None:
                while len(self._cut) >= MEMO_CUT_ENTRIES:
                    self._drop(next(iter(self._cut)))
            # Oldest first, cut entries before the others, until it fits (a key already held keeps its place).
            for oldest in [*self._cut, *(k for k in self if k not in self._cut)]:
                if (len(self) < MEMO_ENTRIES or old is not None) and self.size + delta <= self.limit and _memo_total[0] + delta <= MEMO_TOTAL_BYTES:
                    break
                if oldest != key:
                    self._drop(oldest)
            if _memo_total[0] + delta > MEMO_TOTAL_BYTES or self.size + delta > self.limit:
                if old is not None:
                    self._drop(key)
                return  # all memos are full: not kept
            dict.__setitem__(self, key, value)
            self._costs[key] = cost
            if cut:
                self._cut[key] = None
            self.size += delta
            _memo_total[0] += delta

    def _drop(self, key: object) -> None:
        """Remove ``key``'s entry and its bytes (``_memo_lock`` held)."""
        dict.__delitem__(self, key)
        cost = self._costs.pop(key)
        self._cut.pop(key, None)
        self.size -= cost
        _memo_total[0] -= cost

    def __delitem__(self, key: object) -> None:
        with _memo_lock:
            self._drop(key)

    def pop(self, key: object, *default: object) -> object:
        with _memo_lock:
            if key in self:
                value = dict.__getitem__(self, key)
                self._drop(key)
                return value
        if default:
            return default[0]
        raise KeyError(key)

    def popitem(self) -> tuple[object, object]:
        with _memo_lock:
            key = next(reversed(self))  # LIFO, as dict.popitem
            value = dict.__getitem__(self, key)
            self._drop(key)
            return key, value

    def clear(self) -> None:
        with _memo_lock:
            _memo_total[0] -= self.size
            dict.clear(self)
            self._costs.clear()
            self._cut.clear()
            self.size = 0

    def setdefault(self, key: object, default: object = None) -> object:
        if key not in self:
            self[key] = default
            return default
        return dict.__getitem__(self, key)

    def update(self, *args: object, **kwargs: object) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __del__(self) -> None:
        size = getattr(self, "size", 0)  # unset when __init__ never ran
        if size:
            with _memo_lock:
                _memo_total[0] -= size
                self.size = 0

    def __reduce__(self) -> tuple[object, ...]:  # a pure cache: copies and pickles start empty
        return (type(self), (self.limit,))


#: Bytes per token a cached completion is counted for: its tokens and what requests memoise on
#: it (a parser trace, each profile's plan and pre-serialised chunks), measured on 2,000-token
#: answers served as vLLM chat and Responses, streamed and not: 1.1 KB per token; doubled for other profiles.
BYTES_PER_TOKEN = 2048
_interned: BytesLRU[Completion] = BytesLRU(COMPLETION_CACHE_BYTES)


def _cost(completion: Completion, *texts: str) -> int:
    return sum(map(len, texts)) + BYTES_PER_TOKEN * len(completion.tokens)


def clear_completion_cache() -> None:
    """Forget every cached completion (completions in use stay valid)."""
    _interned.clear()


@dataclass(frozen=True, slots=True)
class Emission:
    """The tokens a server's engine would actually produce for a completion and a token limit.

    Sampling stops after the first ``<|return|>`` or ``<|call|>`` (openai-harmony's
    ``stop_tokens_for_assistant_actions()``, which vLLM passes as stop token ids) or after
    ``max_tokens`` tokens, whichever comes first.

    Attributes:
        tokens: emitted token ids, the stop token included.
        finish_reason: ``"length"`` when cut by ``max_tokens``, else ``"stop"``.
    """

    tokens: Tokens
    finish_reason: FinishReason


def _first_stop(tokens: Tokens, limit: int) -> int | None:
    """The position of the first ``<|return|>`` or ``<|call|>`` among the first ``limit`` tokens."""
    found = None
    for stop in (RETURN, CALL):
        try:
            found = tokens.index(stop, 0, limit if found is None else found)
        except ValueError:
            pass
    return found


@dataclass(frozen=True, slots=True)
class Completion:
    """A scripted completion, surfaced once and reused for every request that plays it.

    Attributes:
        text: Harmony text with special tokens, e.g.
            ``<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>``.
        tokens: ``text`` tokenized with o200k_harmony (special tokens allowed).
    """

    text: str
    tokens: Tokens
    _memo: dict[object, object] = field(default_factory=Memo, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.tokens) * MEMO_BYTES_PER_TOKEN > MEMO_BYTES:  # a long answer: room for its usual shapes
            self._memo.limit = min(MEMO_TOTAL_BYTES // 4, len(self.tokens) * MEMO_BYTES_PER_TOKEN)  # type: ignore[attr-defined]

    @classmethod
    def from_text(cls, text: str) -> Completion:
        """Tokenize raw Harmony text verbatim; any special token in it is read as that token.

        The same text gives the same (shared) completion while it stays in the content-keyed
        cache (:data:`COMPLETION_CACHE_BYTES`), memoised traces and plans included. A text over
        :data:`~mockoss.harmony.layout.CACHED_TEXT_CHARS` characters is encoded by
        :func:`~mockoss.harmony.encoding.encode_text`, which the HTTP layer may send to its prompt
        worker (``ENCODE_ELSEWHERE``; the same ids), as long message contents are: a ``raw``
        templated completion, or one with a ``fault``, is built here (issue 9, eleventh-session
        review TC, finding 8).
        """
        key = (cls, "text", text)
        cached = _interned.get(key)
        if cached is None:
            ids = encode_text(text) if len(text) > CACHED_TEXT_CHARS else load_encoding().encode(text, allowed_special="all")
            cached = cls(text=text, tokens=tuple(ids))
            _interned.put(key, cached, _cost(cached, text))
        return cached

    @classmethod
    def from_messages(cls, messages: Sequence[Message], recipient_positions: Sequence[RecipientPosition] | None = None) -> Completion:
        """Render assistant messages into one completion, in a layout fixed across Harmony libraries.

        Each message is rendered by :func:`mockoss.harmony.layout.render_assistant_message`, the
        layout of openai-harmony 0.0.8's ``HarmonyEncoding.render`` (``<|start|>assistant[ to=R]
        [<|channel|>C][ CT]<|message|>…`` then ``<|call|>`` when it has a recipient, else
        ``<|end|>``). The first message loses its leading ``<|start|>assistant`` (the prompt ends
        with it), and a final-channel message without a recipient ends with ``<|return|>``, the
        stop token a model emits for its answer.

        ``recipient_positions``: one ``"role"`` (the default for every message) or ``"channel"``
        per message: where `` to=R`` goes (see :mod:`mockoss.harmony.layout`).

        Like :meth:`from_text`, the same messages give the same (shared) completion while it is
        cached.

        Raises:
            ValueError: no messages, a message whose author is not the assistant, or
                ``recipient_positions`` not one valid position per message.
        """
        if not messages:
            raise ValueError("a completion needs at least one message")
        positions: tuple[RecipientPosition, ...] | None = None
        if recipient_positions is not None and any(p != "role" for p in recipient_positions):
            positions = tuple(recipient_positions)
            if len(positions) != len(messages):
                raise ValueError(f"recipient_positions: {len(positions)} for {len(messages)} message(s)")
        key = (cls, "messages", tuple(message.to_json() for message in messages)) + ((positions,) if positions else ())
        cached = _interned.get(key)
        if cached is None:
            cached = cls._render_messages(messages, positions)
            _interned.put(key, cached, _cost(cached, *key[2]))
        return cached

    @classmethod
    def _render_messages(cls, messages: Sequence[Message], positions: Sequence[RecipientPosition] | None) -> Completion:
        encoding = load_encoding()
        tokens: list[int] = []
        for position, message in enumerate(messages):
            if message.author.role != Role.ASSISTANT:
                raise ValueError(
                    f"message {position}: a completion holds assistant messages only, "
                    f"got role {message.author.role.value!r}"
                )
            rendered = render_assistant_message(message, positions[position] if positions else "role")
            if position == 0 and tuple(rendered[:2]) == START_ASSISTANT:
                rendered = rendered[2:]
            if message.channel == "final" and rendered and rendered[-1] == END:
                rendered[-1] = RETURN
            tokens.extend(rendered)
        return cls(text=encoding.decode_utf8(tokens), tokens=tuple(tokens))

    def cap(self, max_tokens: int | None) -> int | None:
        """The effective token limit of ``max_tokens`` for this completion: ``None`` when it does
        not cut the emission (``None``, or at least as many tokens as :meth:`emit` gives without a
        limit, the stop token included: the output is then the same), else the limit as a
        :class:`Cut`. Memo keys hold this, not the request's number, so requests with distinct
        large ``max_tokens`` share one plan (issue 9 review, finding 2: every new value re-ran the
        emission, trace and deltas on the event loop, 55-85 ms for a 10,500-token answer).

        Works for any subclass whose :meth:`emit` of a limit at least its unlimited emission's
        length gives that emission (the prefix rule every engine's token limit follows)."""
        if max_tokens is None:
            return None
        if max_tokens >= len(self.emit(None).tokens):
            return None
        return max_tokens if max_tokens.__class__ is Cut else Cut(max_tokens)

    def emit(self, max_tokens: int | None = None) -> Emission:
        """Return what the engine emits for this completion under a ``max_tokens`` limit."""
        if max_tokens is not None:
            max_tokens = self.cap(max_tokens)
        key = ("emit", max_tokens)
        cached = self._memo.get(key)
        if cached is None:
            tokens = self.tokens
            limit = len(tokens) if max_tokens is None else max(0, max_tokens)
            stop = _first_stop(tokens, limit)  # searched in C: a 119,000-token script took ~20 ms token by token
            if stop is not None:
                cached = Emission(tokens=tokens[: stop + 1], finish_reason="stop")
            elif len(tokens) > limit:
                cached = Emission(tokens=tokens[:limit], finish_reason="length")
            else:
                cached = Emission(tokens=tokens, finish_reason="stop")
            self._memo[key] = cached
        return cached  # type: ignore[return-value]

    def trace(
        self, *, max_tokens: int | None = None, strict: bool = True, library: str = "oss-harmony", skip_errors: bool = False
    ) -> ParserTrace:
        """Run the Harmony ``StreamableParser`` over :meth:`emit`'s tokens, once per key.

        ``library``: ``"oss-harmony"`` (the installed parser, as current vLLM runs it) or
        ``"openai-harmony-0.0.8"`` (emulated, :mod:`mockoss.harmony.library`); ``skip_errors``:
        erroring tokens skipped as vLLM's ``HarmonyParser.process_chunk`` does. See
        :func:`mockoss.harmony.trace.parse_tokens`; the result is cached on the completion.
        """
        from mockoss.harmony.library import parse_with

        max_tokens = self.cap(max_tokens)
        key = ("trace", max_tokens, strict, library, skip_errors)
        cached = self._memo.get(key)
        if cached is None:
            cached = parse_with(self.emit(max_tokens).tokens, strict=strict, library=library, skip_errors=skip_errors)  # type: ignore[arg-type]
            self._memo[key] = cached
        return cached  # type: ignore[return-value]


#: What a memo entry's estimate does not look into: completions (counted by the content-keyed
#: cache, ``_cost``) and memos (each counts its own entries), which plans and generations hold.
_OPAQUE: tuple[type, ...] = (Completion, Memo)
