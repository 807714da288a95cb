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
their text. :func:`.certificate.certificate` accepts a parse only when the open nodes (besides
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
extensions; a suffix the probe cannot place takes a full parse and a new certificate), and the
next text whose run reaches the end again (no ``D`` in any window since) is the certificate's
message with the field grown by everything since. Anything else (a tool name at the end, a
literal cut by the end, a piece that closes the run) needs a parse.

A parse in which no check saw the end (``seen`` empty: a tool call whose arguments closed, after
which the grammar ignores the rest, or a failure on a character) is the parse of every longer
text, by stability alone: every later piece is an empty extension, no parse at all.

Completed messages: why a parse may start after them (:class:`_Resumed`). Every grammar of
:func:`.gptoss.build_grammar` (b9553's of :mod:`.grammar_b9553` too) is ``root = sequence(repeat(M), R…)`` with ``M`` =
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
the mapper concatenates in order (the whitespace-only rule applies to the whole reasoning, so
it is checked on the whole), so they are mapped once, each message's text kept apart
(:class:`_Parsed`). Not stable, hence parsed again: the message still open, and a completed message
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
40,000-token one: 8,896 parses reading 310 M characters -> 6 reading 252). A parse's message
is kept as its completed messages plus the rest (:class:`_Parsed`) and reaches the stream as an
extension of the previous result when it grew one field (:func:`_relative` compares the text
since the previous result's completed messages), so the answer is not copied per parse (500
messages: 3,771 whole messages built -> 6); whole messages remain for the first text, a tool
call appearing or renamed, and anything that is not an append. Measured against the commit
before (7e50f06), same run: equal within this machine's noise (10,000 short messages 1.9-3.4 s
before, 2.3-4.0 s after; 1,200 messages of ~400 tokens 9.1-9.8 vs 9.0-10.0 us per token): the
copy was cheap next to the parse, but it grew with the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.certificate import SAME, Extend, Open, certificate, grown
from mockoss.profiles.llamacpp.gptoss import GENERATION_PROMPT, ChatMsg, Grammar, blank, fold_nodes

__all__ = ["Extend", "grown", "materialize", "partial_parses"]


class _Parsed:
    """One parse's message, kept as the completed messages (the first ``count`` of ``owner``'s)
    and the rest: ``content``, ``reasoning`` (whitespace-only kept) and ``calls`` of the nodes
    after them. :meth:`message` builds the :class:`~.gptoss.ChatMsg` (a copy of the answer)."""

    __slots__ = ("calls", "content", "count", "owner", "reasoning", "thinks")

    def __init__(self, owner: _Resumed, text: str, nodes: list[peg.Node]) -> None:
        self.owner, self.count = owner, len(owner.contents)
        self.content, self.reasoning, self.calls = fold_nodes(text, nodes)
        #: the message's reasoning field is not empty (the mapper drops whitespace-only reasoning)
        self.thinks = owner.thinks <= self.count - 1 or not blank(self.reasoning)

    def message(self) -> ChatMsg:
        owner, count = self.owner, self.count
        reasoning = "".join(owner.reasonings[:count]) + self.reasoning if self.thinks else ""
        return ChatMsg("".join(owner.contents[:count]) + self.content, reasoning, self.calls)

    def empty(self) -> bool:
        return not (self.thinks or self.calls or self.content or self.owner.says <= self.count - 1)


class _Resumed:
    """Full parses of one growing text, resumed after its last completed message (module
    docstring, "Completed messages"). ``parts`` hold the text from the end of that message on (the
    parser never reads before its start position, so the rest is dropped); ``contents`` and
    ``reasoning`` what each message before it maps to, ``says`` and ``thinks`` the number of the
    first with content and with reasoning that is not whitespace only; :meth:`add` appends a
    piece. ``parses`` and ``parsed`` count the parses and the characters they started from
    (tests bound them)."""

    __slots__ = ("contents", "grammar", "memo", "parsed", "parses", "parts", "reasonings", "says", "thinks")

    def __init__(self, grammar: Grammar, text: str) -> None:
        self.grammar, self.parts = grammar, [text]
        self.contents: list[str] = []
        self.reasonings: list[str] = []
        self.says = self.thinks = _NEVER
        self.parses = self.parsed = 0
        self.memo: dict = {}  # peg.remembering's table for the text after the last completed message

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
            content, reasoning, _calls = fold_nodes(text, nodes)
            if content and self.says == _NEVER:
                self.says = len(self.contents)
            if self.thinks == _NEVER and not blank(reasoning):
                self.thinks = len(self.contents)
            self.contents.append(content)
            self.reasonings.append(reasoning)
            mark = end

    def __call__(self) -> tuple[_Parsed | None, Open | None]:
        """``grammar.parse`` of the whole text (partial; ``None``: failed) and its certificate."""
        text = "".join(self.parts) if len(self.parts) > 1 else self.parts[0]
        mark = self._advance(text)
        if mark:
            text = text[mark:]
            self.memo = {}  # its positions moved
        self.parts = [text]
        self.parses += 1
        self.parsed += len(text)
        with peg.first_end_observation() as seen, peg.remembering(self.memo):
            kind, _end, nodes = self.grammar.root(text, 0)
        if kind == peg.FAIL:
            # a failed partial parse: an empty message (Grammar.parse); stable if nothing saw the end
            return None, (None if seen else Open("stable", "", ""))
        parsed = _Parsed(self, text, nodes)
        return parsed, certificate(self, text, nodes, seen, parsed)


#: The tags a completed message may hold to be mapped once (the mapper only appends their text).
_MAPPED = frozenset({"content", "reasoning"})
_NEVER = 1 << 62


def _appended(old: str, new: str) -> str | None:
    """What ``new`` appends to ``old`` (``""``: they are equal), or ``None`` if it is no append."""
    if new == old:
        return ""
    return new[len(old) :] if new.startswith(old) else None


def _relative(last: _Parsed, added: dict[str, list[str]], parsed: _Parsed) -> Extend | None:
    """``parsed``'s message as an :class:`Extend` of ``last``'s grown by ``added`` (pieces by
    field), when it differs in at most one field, by text appended; else ``None``. Costs the
    text since ``last``'s completed messages, not the answer."""
    owner, grew = last.owner, []
    since = slice(last.count, parsed.count)
    text = _appended(last.content + "".join(added["content"]), "".join(owner.contents[since]) + parsed.content)
    if text is None:
        return None
    if text:
        grew.append(Extend("content", text))
    if parsed.thinks and not last.thinks:
        grew.append(Extend("reasoning", parsed.message().reasoning_content))
    elif parsed.thinks != last.thinks:
        return None
    elif parsed.thinks:
        text = _appended(
            last.reasoning + "".join(added["reasoning"]), "".join(owner.reasonings[since]) + parsed.reasoning
        )
        if text is None:
            return None
        if text:
            grew.append(Extend("reasoning", text))
    calls = last.calls
    if added["tool"]:
        name, args = calls[-1]
        calls = (*calls[:-1], (name, args + "".join(added["tool"])))
    if parsed.calls != calls:
        if len(calls) != len(parsed.calls) or not calls or calls[:-1] != parsed.calls[:-1]:
            return None
        (name, args), (new_name, new_args) = calls[-1], parsed.calls[-1]
        if name != new_name or not new_args.startswith(args):
            return None
        grew.append(Extend("tool", new_args[len(args) :], len(calls) - 1))
    if len(grew) > 1:
        return None
    return grew[0] if grew else SAME


def partial_parses(
    grammar: Grammar, prefill: str, pieces: Iterable[str], parse: _Resumed | None = None
) -> Iterator[ChatMsg | Extend]:
    """Per piece, the partial parse of ``prefill`` + the pieces so far, as
    ``grammar.parse(prefill + text, partial=True)`` gives it: a :class:`ChatMsg`, or an
    :class:`Extend` of the previous result (never for the first piece, nor after an empty one).
    Linear in the text's length while the answer stays inside one open run; at other pieces a
    parse of the text after the last completed message, given as an :class:`Extend` when it
    grew one field of the previous result. ``parse``: a fresh ``_Resumed(grammar,
    GENERATION_PROMPT + prefill)`` to use (tests read its counts)."""
    certificate: Open | None = None
    parse = parse or _Resumed(grammar, GENERATION_PROMPT + prefill)
    last: _Parsed | None = None  # the last result, when it is a parse's (grown by `added`) and not empty
    added: dict[str, list[str]] = {"content": [], "reasoning": [], "tool": []}
    for piece in pieces:
        parse.add(piece)
        if certificate is not None:
            if not piece:
                yield SAME
                continue
            result = certificate.extend(piece)
            if result is not None:
                if result.field:
                    added[result.field].append(result.piece)
                yield result
                continue
        parsed, certificate = parse()
        if parsed is None:
            last = None
            yield ChatMsg()
            continue
        relative = None if last is None else _relative(last, added, parsed)
        for pieces_added in added.values():
            pieces_added.clear()
        last = None if parsed.empty() else parsed
        yield parsed.message() if relative is None else relative


def materialize(results: Iterable[ChatMsg | Extend]) -> Iterator[ChatMsg]:
    """The :class:`ChatMsg` of each result of :func:`partial_parses` (tests; quadratic)."""
    last = ChatMsg()
    for result in results:
        last = grown(last, (result,)) if isinstance(result, Extend) else result
        yield last
