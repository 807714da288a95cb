"""llama-server's per-token partial parse (:meth:`.gptoss.Grammar.parse`), in linear time.

llama-server re-parses the whole generated text after every token (:mod:`.plan`), so replaying
that literally costs time quadratic in the answer's length: a 10,000-token answer's first streamed
request took ~0.4 s in process, a tool call writing a 10,000-token string ~12 s (issue 9).
:func:`partial_parses` gives, token by token, exactly the :class:`~.gptoss.ChatMsg` those
re-parses give, but skips the re-parse when it can prove the result is the previous one with the
text of one open run (an analysis or final message, or a JSON string of tool arguments, still
being written) extended by the new piece. Whenever the proof's condition does not hold, it
parses again, as llama-server does, but from the end of the last completed message on, reusing
what the parse of the previous text settled for good ("Completed messages" below).

Why the shortcut is exact. :mod:`.peg` calls ``_saw_end`` at every check whose outcome depends on
where the input ends, and only there: a literal cut by the end (``NEED``), a repetition stopping
because its position reached the end, an ``until`` whose ``find`` found no delimiter, a
character or space run reaching the end, a JSON string left open or cut inside an escape. Every
other check reads only characters before the end, so it answers the same on any text
``t' = t + s`` (*stability*): a literal that matched still matches; one that failed has a
mismatching character inside ``t`` (a failure cut by the end is impossible: a proper prefix of
the word is ``NEED``); an ``until`` that found its delimiter finds the same first one (an
earlier occurrence would lie inside ``t``); a run that stopped before the end stopped on a
character outside its class or at its maximum; a JSON string that closed or failed did so on a
character. The combinators (sequence, ordered choice, greedy possessive repetition, tag, atomic)
decide only on their parts' results and on ``pos >= len(text)``, an observation itself.

Let a full parse of ``t`` (``L = len(t)``) have as its FIRST end observation a run O started at
``u < L`` that reached the end: an ``until(D)`` that found no delimiter and returned ``L`` (no
suffix of ``t[u:]`` is a proper prefix of ``D``), or a JSON string scan that answered ``NEED``
at ``L`` (between characters, or inside an escape begun at ``e``). Then for ``t' = t + s``, when
O on ``t'`` again reaches the end:

1. Everything evaluated before O (in time) saw no end, so by stability it answers the same on
   ``t'``, and O is called again at ``u``.
2. O reaches the end of ``t'``. For ``until`` this is decided on the window
   ``t'[max(u, L - len(D) + 1):]``: an occurrence of ``D`` in ``t'[u:]`` lying wholly inside
   ``t`` would have been found on ``t``, so any occurrence or end-of-input prefix of ``D``
   starts in that window, where the containment test and :func:`.held.held_suffix` check exactly
   ``until``'s two conditions. The JSON scanner reads ``t'`` as it read ``t`` up to ``L`` (or up to the cut escape's
   start ``e``, a point between characters), and from there on exactly as
   :func:`.peg.json_string_scan` reads ``s`` (or ``t[e:L] + s``) from a fresh start.
3. After O everything happens at the end of the input. A JSON scan at the end answers ``NEED``,
   which every combinator hands straight up: nothing else is evaluated. After an ``until``, at
   ``pos == len(text)`` no parser fails (a literal, a JSON value, a ``chars`` with a minimum
   answer ``NEED``; ``until``, ``space``, repetitions answer ``OK``), and each parser's answer
   there depends on nothing but the parser: kind, end ``len(text)``, nodes ``(tag, len, len)``.
   So no failure travels back up, no choice tries another option, no repetition rewinds: from
   O's return on, ``t`` and ``t'`` run the same steps, at ``L`` and ``len(t')``. Positions
   before O are ``<= u < L``, so the only position that changes is ``L``, which becomes
   ``len(t')``; every comparison of positions comes out the same.

Hence the node list of ``t'`` is that of ``t`` with every end (and start) equal to ``L`` replaced
by ``len(t')``: the nodes open at the end (``start < L == end``) grow by ``s``, the rest keep
their text. :func:`_certificate` accepts a parse only when the open nodes (besides
``tool-open``, whose text the mapper never reads) are none, or one ``content``, ``reasoning``
or ``tool-args`` node. ``content`` and ``reasoning`` are concatenations of their nodes in order
and the nodes after the open one are empty, so the field grows by ``s``; ``reasoning`` only when
it already holds a non-whitespace character (else the mapper's whitespace rule could turn it
on). ``tool-args`` must be the last node: the mapper then sets the current call's arguments to
the node's text with trailing whitespace stripped, when the call has a name and the text starts
with ``{`` (both fixed once the node has a character), so the arguments grow by the whitespace
held back so far plus ``s`` stripped, and whitespace-only pieces change nothing. O stays the
first end observation on ``t'``, so the argument repeats token after token. Nothing in it needs
``t'`` to be the very next text: a piece that leaves a prefix of ``D`` at the end (``a <``,
which ``until`` holds back) is handled by :mod:`.held` (one probe parse per held suffix, then
extensions), and the next text whose run reaches the end again (no ``D`` in any window since)
is the certificate's message with the field grown by everything since. Anything else (a tool
name at the end, a literal cut by the end, a piece that closes the run) needs a parse.

A parse in which no check saw the end (``seen`` empty: a tool call whose arguments closed, after
which the grammar ignores the rest, or a failure on a character) is the parse of every longer
text, by stability alone: every later piece is an empty extension, no parse at all.

Completed messages: why a parse may start after them (:class:`_Resumed`). Every grammar of
:func:`.gptoss.build_grammar` is ``root = sequence(repeat(M), R…)`` with ``M`` =
``Grammar.message`` (``<|start|>assistant`` and an analysis or preamble message ending in
``<|end|>``). ``repeat`` is possessive, so ``root(t, 0)`` runs ``M`` at ``0``, at its end ``p1``,
and so on, never going back into a round once it returned. Say rounds 1..k returned ``OK``
without any check seeing the end (:func:`.peg.first_end_observation`, checked by running ``M``
alone at each mark). By stability each of them returns the same on every longer text, so the
parse of any ``t'`` extending ``t`` starts with the same k rounds, ending at ``pk``. From there
on, ``repeat``'s loop depends only on its position (``minimum`` is 0 and ``maximum`` unbounded:
the count does not matter), so the rest of ``root(t', 0)`` is exactly ``root(t', pk)``: the same
kind and end, nodes = the k rounds' nodes + ``root(t', pk)``'s (a failure of ``R`` fails both).
The parser never reads before its start position, so the text before ``pk`` is dropped and
positions restart at 0. The k rounds' nodes are only ``content`` and ``reasoning`` (checked), which
the mapper concatenates in order, so they are mapped once (``map_nodes``' ``*_before``
arguments). Not stable, hence parsed again: the message still open, and a completed message
whose parse saw the end (none in this grammar: ``<|end|>`` is a literal matched whole).
Inside that parse, :func:`.peg.remembering` reuses the same way any JSON value, and any round of
an unbounded repetition (JSON members and elements), that saw no end: a tool call's arguments
with many members cost the open member per token, not all of them.

Measured in process, the first streamed request's replay, old (c25797f) and new alternating in
one run on a 2-core machine at load ~6 (analysis and preamble messages of ~13 tokens each):
250 / 1,000 / 3,000 messages 2.4-3.3 s / 25 s / 282 s -> 80-140 / 140-350 / 350-500 ms (a
parse reads ~16 characters per token, flat; parser calls per token 106-110); tool arguments
of 30 / 100 JSON objects 0.6-1.1 / 6.4-10.7 s -> 70-130 / 390-450 ms (1,000: 1.0 s); a
code-like answer with ``<`` every few tokens, 10,000 tokens 200-310 -> 120-180 ms (a
40,000-token one: 8,896 parses reading 310 M characters -> 6 reading 252). Left: a parse
still builds the whole message (the completed messages' text joined to the open one's) and
:mod:`.plan` compares it with the previous: a copy of the answer per parse, in C (per token
6.5 µs at 1,000 messages, 7.5 µs at 10,000, measured before the JSON and held-back changes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from mockoss.profiles.llamacpp import held, peg
from mockoss.profiles.llamacpp.gptoss import _TRAILING_SPACE, GENERATION_PROMPT, ChatMsg, Grammar, map_nodes

__all__ = ["Extend", "grown", "materialize", "partial_parses"]

_TOOL_OPEN, _TOOL_NAME, _TOOL_ARGS = "tool-open", "tool-name", "tool-args"
_OPEN_FIELDS = ("content", "reasoning", _TOOL_ARGS)


class Extend(NamedTuple):
    """A partial parse equal to the previous one with ``field`` extended by ``piece``:
    ``"content"``, ``"reasoning"``, or ``"tool"`` (the arguments of the last tool call, number
    ``index``); ``field == ""``: equal to the previous one."""

    field: str
    piece: str
    index: int = -1


_SAME = Extend("", "")


class _Open:
    """A parse's certificate (module docstring): its first end observation was an open run.

    ``kind`` ``"until"`` (``delimiter``, and ``tail``: the text after
    ``max(pos, len(t) - len(delimiter) + 1)``), ``"string"`` (a JSON string; ``tail``: the
    escape the end cut, whose scan resumes with the next piece) or ``"stable"`` (no check saw
    the end); ``field`` the message field that grows (``""``: none); for ``"tool"``, ``index``
    of the call and ``spaces``, the open node's trailing whitespace, which the mapper strips
    until a later character follows. For ``"until"``: ``msg`` is the message of the parse that
    gave the certificate and ``since`` the pieces after it; ``probe`` what :func:`.held.probe`
    needs (the parser that gave it first, which counts the probes) and ``modes`` its answers by
    held suffix; ``pending`` the held suffix left out of the last result; ``synced``: the last
    result is ``msg`` grown by ``since`` minus ``pending`` (false after a full parse).
    """

    __slots__ = (
        "delimiter",
        "field",
        "index",
        "kind",
        "modes",
        "msg",
        "pending",
        "probe",
        "since",
        "spaces",
        "synced",
        "tail",
    )

    def __init__(self, kind: str, delimiter: str, tail: str, msg: ChatMsg) -> None:
        self.kind, self.delimiter, self.tail, self.msg = kind, delimiter, tail, msg
        self.field, self.index, self.spaces = "", -1, ""
        self.since: list[str] = []
        self.probe: tuple = ()
        self.modes: dict[str, str | None] = {}
        self.pending, self.synced = "", True

    def extend(self, piece: str) -> Extend | ChatMsg | None:
        """The result after ``piece`` (non-empty): an :class:`Extend` of the previous one, a
        whole message, or ``None`` when it needs a full parse (:data:`_HELD`: a full parse, but
        the certificate stays)."""
        if self.kind == "stable":
            return _SAME
        if self.kind == "until":
            return self._until(piece)
        escape = peg.json_string_scan(self.tail + piece)
        if escape is None:
            return None
        self.tail = escape
        if self.field != "tool":
            return Extend(self.field, piece) if self.field else _SAME
        kept = piece.rstrip(_TRAILING_SPACE)
        if not kept:
            self.spaces += piece
            return _SAME
        added, self.spaces = self.spaces + kept, piece[len(kept) :]
        return Extend("tool", added, self.index)

    def _until(self, piece: str) -> Extend | ChatMsg | None:
        window = self.tail + piece
        if self.delimiter in window:
            return None
        keep = len(self.delimiter) - 1
        self.tail = window[-keep:] if keep else ""
        self.since.append(piece)
        suffix = held.held_suffix(window, self.delimiter)
        if suffix:
            # U now stops before that prefix. No delimiter since the certificate's parse, so the
            # message follows from the certificate's (held.py), when the probe proves how.
            mode = self.modes[suffix] if suffix in self.modes else self.modes.setdefault(suffix, self._probe(suffix))
            if mode is None:
                self.synced = False
                return _HELD
            if mode == held.KEPT:
                suffix = ""
        added = held.growth(self.pending, piece, suffix)
        self.pending = suffix
        if not self.synced:
            # the last result came from a full parse: give the whole message
            self.synced = True
            since = "".join(self.since)
            self.msg = grown(self.msg, [Extend(self.field, since[: len(since) - len(suffix)])])
            self.since, self.pending = [suffix] if suffix else [], suffix
            return self.msg
        return Extend(self.field, added) if self.field and added else _SAME

    def _probe(self, suffix: str) -> str | None:
        if self.field not in ("", "content", "reasoning"):
            return None
        owner, text, *rest = self.probe
        owner.parses += 1
        owner.parsed += len(text) + len(suffix)
        return held.probe(owner.grammar, text, *rest, suffix)


#: :meth:`_Open.extend`'s answer for a piece that needs a full parse, after which the certificate
#: still holds for the pieces that follow.
_HELD = ChatMsg("held")


def _certificate(
    owner: _Resumed, text: str, nodes: list[peg.Node], seen: list[peg.EndObservation], msg: ChatMsg
) -> _Open | None:
    """The shortcut's condition for the parse of ``text`` (module docstring), or ``None``."""
    if not seen:
        return _Open("stable", "", "", msg)  # no check saw the end: every longer text parses the same
    what, pos, end, delimiter = seen[0]
    size = len(text)
    if end != size or pos >= size:
        return None
    if what == "until" and delimiter:
        certificate = _Open("until", delimiter, text[max(pos, size - len(delimiter) + 1) :], msg)
    elif what == "string" or what == "escape":
        certificate = _Open("string", "", delimiter, msg)
    else:
        return None
    opened = [i for i, (name, start, stop) in enumerate(nodes) if stop == size and start < size and name != _TOOL_OPEN]
    if what == "until":
        certificate.probe = (owner, text, nodes, opened[0] if opened else -1, pos, delimiter)
    if not opened:
        return certificate
    if len(opened) > 1 or nodes[opened[0]][0] not in _OPEN_FIELDS:
        return None
    name, start, _stop = nodes[opened[0]]
    if name == "reasoning" and not msg.reasoning_content:
        return None  # whitespace-only reasoning is dropped: a piece could make it appear
    if name != _TOOL_ARGS:
        certificate.field = name
        return certificate
    if opened[0] != len(nodes) - 1:
        return None
    raw = text[start:size]
    args = raw.rstrip(_TRAILING_SPACE)
    if not args:
        return None
    called = None  # the mapper's current call: None, or its name so far
    for name, start, stop in nodes:
        if name == _TOOL_OPEN:
            called = ""
        elif name == _TOOL_NAME and called is not None:
            called = text[start:stop].rstrip(_TRAILING_SPACE)
    if called and args.startswith("{"):  # the mapper sets the arguments (else they stay as they are)
        certificate.field, certificate.index, certificate.spaces = "tool", len(msg.tool_calls) - 1, raw[len(args) :]
    return certificate


class _Resumed:
    """Full parses of one growing text, resumed after its last completed message (module
    docstring, "Completed messages"). ``text`` is the text from the end of that message on (the
    parser never reads before its start position, so the rest is dropped), ``content`` and
    ``reasoning`` what the messages before it map to; :meth:`add` appends a piece. ``parses``
    and ``parsed`` count the parses and the characters they started from (tests bound them)."""

    __slots__ = ("content", "grammar", "memo", "parsed", "parses", "parts", "reasoning", "text")

    def __init__(self, grammar: Grammar, text: str) -> None:
        self.grammar, self.text, self.parts = grammar, text, [text]
        self.content = self.reasoning = ""
        self.parses = self.parsed = 0
        self.memo: dict = {}  # peg.remembering's table for self.text

    def add(self, piece: str) -> None:
        self.parts.append(piece)

    def _advance(self, text: str) -> int:
        """Map every message that now parses to its end without an end observation; the position
        after the last one."""
        message, mark = self.grammar.message, 0
        if message is None:
            return 0
        while True:
            with peg.first_end_observation() as seen:
                kind, end, nodes = message(text, mark)
            if kind != peg.OK or seen or end <= mark or any(name not in _MAPPED for name, _, _ in nodes):
                return mark
            for name, start, stop in nodes:
                if name == "content":
                    self.content += text[start:stop]
                else:
                    self.reasoning += text[start:stop]
            mark = end

    def __call__(self) -> tuple[ChatMsg, _Open | None]:
        """``grammar.parse`` of the whole text (partial) and its certificate."""
        text = "".join(self.parts) if len(self.parts) > 1 else self.parts[0]
        mark = self._advance(text)
        if mark:
            text = text[mark:]
            self.memo = {}  # its positions moved
        self.text, self.parts = text, [text]
        self.parses += 1
        self.parsed += len(text)
        with peg.first_end_observation() as seen, peg.remembering(self.memo):
            kind, _end, nodes = self.grammar.root(text, 0)
        if kind == peg.FAIL:
            # a failed partial parse: an empty message (Grammar.parse); stable if nothing saw the end
            return ChatMsg(), (None if seen else _Open("stable", "", "", ChatMsg()))
        msg = map_nodes(text, nodes, self.content, self.reasoning)
        return msg, _certificate(self, text, nodes, seen, msg)


#: The tags a completed message may hold to be mapped once (the mapper only appends their text).
_MAPPED = frozenset({"content", "reasoning"})


def partial_parses(
    grammar: Grammar, prefill: str, pieces: Iterable[str], parse: _Resumed | None = None
) -> Iterator[ChatMsg | Extend]:
    """Per piece, the partial parse of ``prefill`` + the pieces so far, as
    ``grammar.parse(prefill + text, partial=True)`` gives it: a :class:`ChatMsg`, or an
    :class:`Extend` of the previous result (never for the first piece). Linear in the text's
    length while the answer stays inside one open run; at other pieces a parse of the text after
    the last completed message. ``parse``: a fresh ``_Resumed(grammar, GENERATION_PROMPT +
    prefill)`` to use (tests read its counts)."""
    certificate: _Open | None = None
    parse = parse or _Resumed(grammar, GENERATION_PROMPT + prefill)
    for piece in pieces:
        if certificate is not None:
            if not piece:
                yield _SAME
                continue
            result = certificate.extend(piece)
            if result is not None:
                parse.add(piece)
                yield parse()[0] if result is _HELD else result
                continue
        parse.add(piece)
        msg, certificate = parse()
        yield msg


def grown(msg: ChatMsg, results: Iterable[Extend]) -> ChatMsg:
    """``msg`` with the extensions ``results`` applied in order (each field joined once)."""
    added: dict[tuple[str, int], list[str]] = {}
    for result in results:
        if result.field:
            added.setdefault((result.field, result.index), []).append(result.piece)
    content = msg.content + "".join(added.pop(("content", -1), ()))
    reasoning = msg.reasoning_content + "".join(added.pop(("reasoning", -1), ()))
    calls = list(msg.tool_calls)
    for (_field, index), pieces in added.items():
        name, args = calls[index]
        calls[index] = (name, args + "".join(pieces))
    return ChatMsg(content, reasoning, tuple(calls))


def materialize(results: Iterable[ChatMsg | Extend]) -> Iterator[ChatMsg]:
    """The :class:`ChatMsg` of each result of :func:`partial_parses` (tests; quadratic)."""
    last = ChatMsg()
    for result in results:
        last = grown(last, (result,)) if isinstance(result, Extend) else result
        yield last
