"""The regex parser's per-token partial parses (:func:`.regex_parser.parse_regex`), in linear time.

llama-server re-parses the whole generated text after every token and streams the difference
(:mod:`.plan`); with the regex parser (``--switch parser=regex``: ``common_chat_parse_gpt_oss``
of ``ggml-org/llama.cpp:common/chat.cpp``, ggml-org/llama.cpp#15181) replaying that literally
costs time quadratic in the answer: the first streamed request of 25 / 200 short messages took
0.18 / 12 s in process. :func:`regex_partials` gives, token by token, exactly the
:class:`~.gptoss.ChatMsg` of ``parse_regex(text, partial=True)``, at a cost linear in the text.

Why it is exact. The parse is a loop of rounds (:func:`.regex_parser.round_at`): round ``k``
starts at ``p_k`` (0, or just after a ``<|start|>assistant``), reads only ``text[p_k:]`` (every
check is a ``find``, a slice, a regex ``fullmatch`` of the header, a whitespace run or the JSON
parser, all started at or after ``p_k``), appends at most one content text, one reasoning text
and one call, and either ends the loop or gives ``p_{k+1}``. The loop's state between rounds is
the position and the appended texts; nothing else carries over.

1. *Settled rounds.* A round whose checks did not depend on where the text ends (``stable``:
   every ``find`` that matters found its marker, the JSON parser saw no end,
   :func:`.peg.first_end_observation`) and which found the next ``<|start|>assistant`` gives the
   same outputs and the same ``p_{k+1}`` on every longer text ``t' = t + s``: a first occurrence
   inside ``t`` is the first in ``t'``; the header is the same text, so it matches the same
   regex; a JSON value that saw no end answers the same (:mod:`.peg`'s stability). By induction
   the parse of ``t'`` starts with the same settled rounds, and from ``p_k`` on it is the loop
   started at ``p_k``: the rest of ``t'`` from ``p_k`` is all it reads, so that text alone is
   kept and positions restart at 0 (``_Stream.parts``), the settled rounds' outputs are kept
   once (``contents``, ``reasonings``, ``calls``: ``ChatMsg`` fields are their concatenation).
2. *The open round.* After the settled rounds, the first round that is not settled ends the
   loop (a round that is not stable ran to the end of the text, or raised; a stable one found
   no next start). Its :class:`~.regex_parser.Watch` says how ``t'`` can change it:

   * ``find``: it searched for a marker ``D`` from some ``q`` and did not find it. In ``t'`` an
     occurrence from ``q`` on would overlap ``s`` (one inside ``t`` would have been found), so
     it starts in ``t'[max(q, L - len(D) + 1):]`` = ``tail + s``. With no ``D`` there, the
     search fails again, every earlier check of the round answers as on ``t`` (found markers,
     the same header), so the round does the same thing: a missing ``<|message|>`` raises again
     and a missing next start ends the loop again (the result is the previous one); a missing
     ``<|end|>`` of a final, preamble or (``reasoning_format: none``) analysis message appends
     ``text[c:]`` for a fixed ``c``, which grows by ``s``: the content field grows by ``s`` (that
     round's text is the field's last part). For an analysis message the reasoning is
     ``text[c:].strip()``: once it holds a non-space character, its leading whitespace is
     settled and it grows by ``(spaces + s).rstrip()``, ``spaces`` being the trailing whitespace
     held back so far (``Watch.spaces``), which becomes the new trailing whitespace. While it
     is still whitespace only, the round is parsed again (no watch).
   * ``json``: the round's JSON arguments answered ``NEED`` and the parser's first end
     observation is an open string (or an escape cut by the end, ``tail``). By :mod:`.peg`'s
     argument (:mod:`.incremental`'s docstring, points 1-3) the parse of ``t'`` is ``NEED``
     again exactly when :func:`.peg.json_string_scan` of ``tail + s`` reaches the end (it then
     gives the next ``tail``): the round raises again, the result is the previous one.

   Anything else (a marker in the window, the scan closing the string, a round with no watch)
   parses again from ``p_k``: the rounds that became settled are folded in (1) and the rest is
   the new open round. JSON arguments are parsed with :func:`.peg.remembering`'s table for the
   kept text (reset when the kept text moves), so completed members are not parsed again.
3. *The stream.* A result that is the previous one with one field grown by appended text is
   given as an :class:`~.incremental.Extend` (``SAME``: unchanged), which :mod:`.plan` turns into
   the diff ``compute_diffs`` would give, so the answer is neither copied nor compared per token.
   After a parse the new result is compared with the previous one on the text since the
   previous parse's settled rounds only (:meth:`_Stream._relative`); a whole
   :class:`~.gptoss.ChatMsg` is built for the first result, after an empty one, when a tool call
   appears (calls appear whole in this parser) or when more than one field changed.

Cost: every character is read by a constant number of parses of its round (one while the round
is open and its watch fails, one when it settles), plus the window ``tail + s`` per piece; tool
arguments are the exception: a token outside a JSON string joins and parses the open value
again, its completed members reused. Measured in process, 2-core machine shared at load, the
first streamed request's plan (:meth:`.LlamacppProfile.plan`; analysis, preamble, tool-call and
final messages of ~16 tokens in turn): 25 / 100 / 200 / 1,000 messages 0.18 / 3.05 / 12.0 /
249 s (a5171e4) -> 0.04 / 0.07 / 0.13 / 0.69 s (3,000 messages: 2.2 s); the whole first streamed
chat request over the app (analysis and preambles, no tools) 200 / 1,000 messages 1.1 / 19.5 s
-> 0.05-0.08 / 0.3 s; tool arguments of 100 objects 11.7 s -> 0.23 s (1,000: 2.3 s); a
14,000-token string argument 25.4 s -> 0.14 s, a 14,000-token final answer 0.28 -> 0.13 s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.certificate import SAME, Extend
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.llamacpp.regex_parser import SPACES, Round, Watch, round_at

__all__ = ["regex_partials"]


def _appended(old: str, new: str) -> str | None:
    """What ``new`` appends to ``old`` (``""``: equal), or ``None`` if it is no append."""
    if new == old:
        return ""
    return new[len(old) :] if new.startswith(old) else None


class _Stream:
    """The partial parses of one growing text (module docstring). ``parts``: the text from the
    open round's start on; ``contents``, ``reasonings``, ``calls``: the settled rounds' outputs;
    ``open_*``: the open round's, as pieces (grown by extensions); ``mark``: the settled counts
    when the open parts were last set by a parse. ``parses`` and ``parsed`` count the parses and
    the characters they started from (tests bound them)."""

    def __init__(self, extract_reasoning: bool, tool_calls: bool) -> None:
        self.extract, self.tool_calls = extract_reasoning, tool_calls
        self.parts: list[str] = []
        self.contents: list[str] = []
        self.reasonings: list[str] = []
        self.calls: list[tuple[str, str]] = []
        self.filled = False  # a settled round added a non-empty field
        self.open_content: list[str] = []
        self.open_reasoning: list[str] = []
        self.open_calls: tuple[tuple[str, str], ...] = ()
        self.mark = (0, 0, 0)
        self.watch: Watch | None = None
        self.memo: dict = {}
        self.empty = True  # the last result was empty
        self.parses = self.parsed = 0

    def push(self, piece: str) -> ChatMsg | Extend:
        """The partial parse after ``piece``."""
        self.parts.append(piece)
        watch = self.watch
        if watch is not None:
            grown = self._watched(watch, piece)
            if grown is not None:
                field, added = grown
                if not added:
                    return ChatMsg() if self.empty else SAME
                (self.open_content if field == "content" else self.open_reasoning).append(added)
                if self.empty:
                    self.empty = False
                    return self._message()
                return Extend(field, added)
        return self._parse()

    def _watched(self, watch: Watch, piece: str) -> tuple[str, str] | None:
        """``(field, appended text)`` when the watch proves the open round unchanged but for
        that growth (``("", "")``: no change), else ``None``."""
        if watch.kind == "json":
            tail = peg.json_string_scan(watch.tail + piece)
            if tail is None:
                return None
            self.watch = Watch("json", tail=tail)
            return "", ""
        window = watch.tail + piece
        if watch.delimiter in window:
            return None
        tail = window[1 - len(watch.delimiter) :]  # the last len(D) - 1 characters, or all
        if watch.field == "reasoning":
            joined = watch.spaces + piece
            kept = joined.rstrip(SPACES)
            spaces = joined[len(kept) :] if kept else joined
            self.watch = Watch("find", watch.delimiter, tail, "reasoning", spaces)
            return "reasoning", kept
        self.watch = Watch("find", watch.delimiter, tail, watch.field)
        return watch.field, piece if watch.field else ""

    def _parse(self) -> ChatMsg | Extend:
        """Parse from the open round's start: fold the rounds that settled, then the open one."""
        text = "".join(self.parts)
        self.parses += 1
        self.parsed += len(text)
        pos = 0
        while True:
            round_ = round_at(text, pos, extract_reasoning=self.extract, tool_calls=self.tool_calls, memo=self.memo)
            if not (round_.stable and round_.next != -1):
                break
            self._settle(round_)
            pos = round_.next
        opened = _Open(round_)
        while round_.next != -1 and not round_.incomplete:  # a round not stable that went on (none known)
            round_ = round_at(text, round_.next, extract_reasoning=self.extract, tool_calls=self.tool_calls)
            opened.add(round_)
        if pos:
            text = text[pos:]  # the loop never reads before the open round's start
            self.memo = {}  # its positions moved
        self.parts = [text]
        self.watch = opened.watch
        return self._result(opened)

    def _settle(self, round_: Round) -> None:
        self.contents.append(round_.content)
        if round_.reasoning:
            self.reasonings.append(round_.reasoning)
        if round_.call is not None:
            self.calls.append(round_.call)
        self.filled = self.filled or bool(round_.content or round_.reasoning or round_.call)

    def _result(self, round_: _Open) -> ChatMsg | Extend:
        """The new result after a parse, relative to the previous one when it can be."""
        old = ("".join(self.open_content), "".join(self.open_reasoning), self.open_calls)
        mark = self.mark
        self.mark = (len(self.contents), len(self.reasonings), len(self.calls))
        self.open_content = [round_.content] if round_.content else []
        self.open_reasoning = [round_.reasoning] if round_.reasoning else []
        self.open_calls = round_.calls
        was_empty = self.empty
        self.empty = not (self.filled or round_.content or round_.reasoning or round_.calls)
        if self.empty:
            return ChatMsg()
        if was_empty:
            return self._message()
        relative = self._relative(mark, old, round_)
        return self._message() if relative is None else relative

    def _relative(self, mark: tuple[int, int, int], old: tuple[str, str, tuple], round_: _Open) -> Extend | None:
        """The new result as an extension of the previous one (compared on the text since
        ``mark``), or ``None``."""
        if (*self.calls[mark[2] :], *round_.calls) != old[2]:
            return None
        grew: list[Extend] = []
        content = _appended(old[0], "".join(self.contents[mark[0] :]) + round_.content)
        reasoning = _appended(old[1], "".join(self.reasonings[mark[1] :]) + round_.reasoning)
        if content is None or reasoning is None:
            return None
        if content:
            grew.append(Extend("content", content))
        if reasoning:
            grew.append(Extend("reasoning", reasoning))
        if len(grew) > 1:
            return None
        return grew[0] if grew else SAME

    def _message(self) -> ChatMsg:
        """The whole current result (a copy of the answer)."""
        return ChatMsg(
            "".join(self.contents) + "".join(self.open_content),
            "".join(self.reasonings) + "".join(self.open_reasoning),
            (*self.calls, *self.open_calls),
        )


class _Open:
    """What the rounds after the settled ones add: normally one round, the open one, whose
    watch is kept; a round that is not stable yet goes on to a next one (none is known: JSON
    that saw the end reaches it) would add the rest, and then no watch applies."""

    __slots__ = ("calls", "content", "reasoning", "watch")

    def __init__(self, round_: Round) -> None:
        self.content, self.reasoning, self.watch = round_.content, round_.reasoning, round_.watch
        self.calls: tuple[tuple[str, str], ...] = () if round_.call is None else (round_.call,)

    def add(self, round_: Round) -> None:
        self.content += round_.content
        self.reasoning += round_.reasoning
        self.calls += () if round_.call is None else (round_.call,)
        self.watch = None


def regex_partials(
    pieces: Iterable[str], *, extract_reasoning: bool, tool_calls: bool, stream: _Stream | None = None
) -> Iterator[ChatMsg | Extend]:
    """Per piece, ``parse_regex(text_so_far, partial=True)`` (:func:`.regex_parser.parse_regex`,
    same flags): a :class:`~.gptoss.ChatMsg`, or an :class:`~.incremental.Extend` of the previous
    result (never for the first piece, nor after an empty result), as
    :func:`.incremental.partial_parses` gives them to :func:`.plan.plan_for`. Linear in the
    text's length (module docstring). ``stream``: a fresh ``_Stream`` with the same flags to use
    (tests read its counts)."""
    stream = stream or _Stream(extract_reasoning, tool_calls)
    for piece in pieces:
        yield stream.push(piece)
