"""llama-server's per-token partial parse (:meth:`.gptoss.Grammar.parse`), in linear time.

llama-server re-parses the whole generated text after every token (:mod:`.plan`), so replaying
that literally costs time quadratic in the answer's length: a 10,000-token answer's first streamed
request took ~0.4 s in process (issue 9). :func:`partial_parses` gives, token by token, exactly
the :class:`~.gptoss.ChatMsg` those re-parses give, but skips the re-parse when it can prove the
result is the previous one with the text of one open ``until`` run (an analysis or final message
still being written) extended by the new piece. Whenever the proof's condition does not hold, it
parses the whole text again, as llama-server does.

Why the shortcut is exact. :mod:`.peg` calls ``_saw_end`` at every check whose outcome depends on
where the input ends, and only there: a literal cut by the end (``NEED``), a repetition stopping
because its position reached the end, an ``until`` whose ``find`` found no delimiter, a
character or space run reaching the end, a JSON string left open. Every other check reads only
characters before the end, so it answers the same on any text ``t' = t + s`` (*stability*): a
literal that matched still matches; one that failed has a mismatching character inside ``t`` (a
failure cut by the end is impossible: a proper prefix of the word is ``NEED``); an ``until``
that found its delimiter finds the same first one (an earlier occurrence would lie inside ``t``);
a run that stopped before the end stopped on a character outside its class or at its maximum; a
JSON string that closed or failed did so on a character. The combinators (sequence, ordered
choice, greedy possessive repetition, tag, atomic) decide only on their parts' results and on
``pos >= len(text)``, which is an observation itself.

Let a full parse of ``t`` (``L = len(t)``) have as its FIRST end observation an ``until(D)``
called at ``u < L`` that found no delimiter and returned ``L`` (no suffix of ``t[u:]`` is a proper
prefix of ``D``); call it U. Then for ``t' = t + s``, when U on ``t'`` again returns ``len(t')``:

1. Everything evaluated before U (in time) saw no end, so by stability it answers the same on
   ``t'``, and U is called again at ``u``.
2. U returns ``len(t')``. This is decided on the window ``t'[max(u, L - len(D) + 1):]``: an
   occurrence of ``D`` in ``t'[u:]`` lying wholly inside ``t`` would have been found on ``t``, so
   any occurrence or end-of-input prefix of ``D`` starts in that window, and
   :func:`_runs_to_end` checks exactly ``until``'s two conditions there.
3. After U everything happens at the end of the input. At ``pos == len(text)`` no parser fails
   (a literal, a JSON value, a ``chars`` with a minimum answer ``NEED``; ``until``, ``space``,
   repetitions answer ``OK``), and each parser's answer there depends on nothing but the parser:
   kind, end ``len(text)``, nodes ``(tag, len, len)``. So no failure travels back up, no choice
   tries another option and no repetition rewinds: from U's return on, ``t`` and ``t'`` run the
   same steps, at ``L`` and ``len(t')`` respectively. Positions before U are ``<= u < L``, so the
   only position that changes is ``L``, which becomes ``len(t')``; every comparison of positions
   comes out the same.

Hence the node list of ``t'`` is that of ``t`` with every end (and start) equal to ``L`` replaced
by ``len(t')``: the nodes open at the end (``start < L == end``) grow by ``s``, the rest keep
their text. :func:`_certificate` accepts a parse only when the open nodes are one ``content``
or ``reasoning`` node (besides ``tool-open`` nodes, whose text the mapper never reads), or none;
for ``reasoning`` only when the reasoning already holds a non-whitespace character (else the
mapper's whitespace rule could turn it on). The new message is then the old one with that field
extended by ``s`` (``content`` and ``reasoning`` are concatenations of their nodes in order, and
the nodes after the open one are empty). U stays the first end observation on ``t'``, so the
argument repeats token after token. A tool name or arguments node at the end (a JSON value still
being written), a literal cut by the end, or an open run that a piece could close, all fall back
to the full parse.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.gptoss import GENERATION_PROMPT, ChatMsg, Grammar, map_nodes

__all__ = ["Extend", "materialize", "partial_parses"]

_OPEN_FIELDS = ("content", "reasoning")
_TOOL_OPEN = "tool-open"


class Extend(NamedTuple):
    """A partial parse equal to the previous one with ``field`` (``"content"`` or
    ``"reasoning"``) extended by ``piece``; ``field == ""``: equal to the previous one."""

    field: str
    piece: str


_SAME = Extend("", "")
#: ``(u, delimiter, field, tail)``: U's position and delimiter, the open field (``""``: none) and
#: ``t[max(u, len(t) - len(delimiter) + 1):]``.
_Certificate = tuple[int, str, str, str]


def _runs_to_end(window: str, delimiter: str) -> bool:
    """``until(delimiter)`` over ``window`` reaches its end: no delimiter in it, and no suffix of
    it is a proper prefix of the delimiter."""
    if delimiter in window:
        return False
    first = delimiter[0]  # a proper prefix of the delimiter at the end starts with its first character
    start = window.find(first, max(0, len(window) - len(delimiter) + 1))
    while start != -1:
        if delimiter.startswith(window[start:]):
            return False
        start = window.find(first, start + 1)
    return True


def _certificate(text: str, nodes: list[peg.Node], seen: list[peg.EndObservation], msg: ChatMsg) -> _Certificate | None:
    """The shortcut's condition for the parse of ``text`` (module docstring), or ``None``."""
    if not seen:
        return None
    what, pos, end, delimiter = seen[0]
    size = len(text)
    if what != "until" or end != size or pos >= size or not delimiter:
        return None
    field = ""
    for name, start, stop in nodes:
        if stop != size or start >= size or name == _TOOL_OPEN:
            continue
        if field or name not in _OPEN_FIELDS:
            return None
        field = name
    if field == "reasoning" and not msg.reasoning_content:
        return None
    return pos, delimiter, field, text[max(pos, size - len(delimiter) + 1) :]


def _parse(grammar: Grammar, text: str) -> tuple[ChatMsg, _Certificate | None]:
    with peg.first_end_observation() as seen:
        kind, _end, nodes = grammar.root(text, 0)
    if kind == peg.FAIL:
        return ChatMsg(), None  # a failed partial parse: an empty message (Grammar.parse)
    msg = map_nodes(text, nodes)
    return msg, _certificate(text, nodes, seen, msg)


def partial_parses(grammar: Grammar, prefill: str, pieces: Iterable[str]) -> Iterator[ChatMsg | Extend]:
    """Per piece, the partial parse of ``prefill`` + the pieces so far, as
    ``grammar.parse(prefill + text, partial=True)`` gives it: a :class:`ChatMsg`, or an
    :class:`Extend` of the previous result (never for the first piece). Linear in the text's
    length while the answer stays inside one open run; a full parse at each other piece."""
    parts = [GENERATION_PROMPT + prefill]
    certificate: _Certificate | None = None
    for piece in pieces:
        if certificate is not None:
            if not piece:
                yield _SAME
                continue
            pos, delimiter, field, tail = certificate
            window = tail + piece
            if _runs_to_end(window, delimiter):
                parts.append(piece)
                keep = len(delimiter) - 1
                certificate = pos, delimiter, field, window[-keep:] if keep else ""
                yield Extend(field, piece) if field else _SAME
                continue
        parts.append(piece)
        text = "".join(parts)
        parts = [text]
        msg, certificate = _parse(grammar, text)
        yield msg


def materialize(results: Iterable[ChatMsg | Extend]) -> Iterator[ChatMsg]:
    """The :class:`ChatMsg` of each result of :func:`partial_parses` (tests; quadratic)."""
    last = ChatMsg()
    for result in results:
        if isinstance(result, Extend):
            if result.field == "content":
                last = ChatMsg(last.content + result.piece, last.reasoning_content, last.tool_calls)
            elif result.field == "reasoning":
                last = ChatMsg(last.content, last.reasoning_content + result.piece, last.tool_calls)
        else:
            last = result
        yield last
