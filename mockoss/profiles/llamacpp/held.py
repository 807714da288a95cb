"""A piece that leaves a prefix of ``<|end|>`` at the end, without a parse (:mod:`.incremental`).

llama-server's ``until`` stops before a suffix of the text that is a proper prefix of its
delimiter (``common/peg-parser.cpp@0243c56a``, ``p.until``): an answer ``a <`` is parsed as
``a`` plus a held-back ``<``, so every ``<`` in a long answer used to cost a full parse of the
open message (a 40,000-token answer with code in it: ~8,900 parses reading 310 M characters).
This module proves, once per held suffix, how such a text's message follows from the
certificate's, so that the piece becomes an extension again.

Setting (:mod:`.incremental`'s notation). A certificate's parse of ``t`` (``L = len(t)``) has as
its first end observation O, an ``until(D)`` called at ``u < L`` that returned ``L``: no ``D`` in
``t[u:]`` and no suffix of ``t[u:]`` a proper prefix of ``D``. Let ``t' = t + s`` with no ``D``
in ``t'[u:]``, and let ``h`` be the longest suffix of ``t'[u:]`` that is a proper prefix of
``D`` (the one ``until`` holds back; :func:`held_suffix`). ``h`` lies inside ``s``: if it began
at ``i < L``, ``t[i:]`` would be a non-empty proper prefix of ``D`` ending ``t``, held back on
``t``. So ``s = m + h``.

Claim: the nodes of ``t'`` are those of ``t + h`` with every position ``>= L`` moved by
``len(m)``, provided the parse of ``t + h`` records no failure after its first end observation
(:func:`.peg.first_end_observation`).

1. ``t + h`` and ``t'`` both extend ``t``: everything before O answers as on ``t`` (stability),
   and O is called at ``u`` on both.
2. On ``t + h``, O finds no ``D`` (one inside ``t`` would be found on ``t``; one starting inside
   ``t`` and ending in ``h`` needs a suffix of ``t`` that is a prefix of ``D``, excluded above;
   ``h`` is too short) and holds back ``h`` (a longer suffix would again start inside ``t``): O
   returns ``L``. On ``t'`` it returns ``L + len(m)``. On both, the text after that point is ``h``.
3. After O returns, a parser is only ever called at an earlier position when a failure reaches
   a choice (which tries its next option where it started) or a repetition (which stops at the
   start of the failed round, and its successor runs there). Without a failure, every call is at
   the end of the previous one, so at a position ``>= L`` (resp. ``>= L + len(m)``), reading
   only ``h``; positions compare the same way after the shift, and the parsers still open when O
   returned only combine their parts' results with their own start positions (``<= u``). So
   ``t'`` runs the same steps as ``t + h``, every position from ``L`` on moved by ``len(m)``.

:func:`probe` parses ``t + h`` (once per certificate and ``h``; ``h`` has fewer than ``len(D)``
possible values) and accepts it only when its nodes are the certificate's, except the open
node ``(F, a, L)``, which is ``(F, a, L)`` again (``h`` left out: the field grows by ``m``) or
``(F, a, L + len(h))`` (``h`` kept: it grows by ``m + h = s``, as with ``reasoning_format:
none``, whose content node spans the ``<|end|>`` literal that answers ``NEED`` on ``h``). Then no
other node reaches past ``L``, so after the shift exactly the open node grows, by ``m`` or ``s``,
and the certificate's argument (nodes after the open one are empty) makes that the field's
growth. Anything else, a failure after O included, keeps the full parse.

Consecutive texts: the part of ``s`` counted so far never shrinks. With ``h`` left out, going from
``s`` (held ``h``) to ``s + p`` (held ``h2``): ``h2`` minus ``p`` is a suffix of ``s`` and a
prefix of ``D``, so no longer than ``h``; the field grows by ``(h + p)[: len(h) + len(p) -
len(h2)]`` (:func:`growth`).
"""

from __future__ import annotations

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.gptoss import Grammar

__all__ = ["growth", "held_suffix", "probe"]

#: :func:`probe`'s answers: the held suffix is left out of the open field / kept in it.
LEFT_OUT, KEPT = "left out", "kept"


def held_suffix(window: str, delimiter: str) -> str:
    """The longest suffix of ``window`` that is a proper prefix of ``delimiter`` (``""``: none),
    as ``until`` finds it: ``window`` must hold the text's last ``len(delimiter) - 1``
    characters after the run's start."""
    first = delimiter[0]  # a proper prefix of the delimiter at the end starts with its first character
    start = window.find(first, max(0, len(window) - len(delimiter) + 1))
    while start != -1:
        if delimiter.startswith(window[start:]):
            return window[start:]
        start = window.find(first, start + 1)
    return ""


def probe(
    grammar: Grammar, text: str, nodes: list[peg.Node], opened: int, pos: int, delimiter: str, held: str
) -> str | None:
    """How the certificate's parse of ``text`` (``nodes``, open node number ``opened`` or -1,
    ``until(delimiter)`` at ``pos`` reaching the end) carries over to a longer text holding back
    ``held``: :data:`LEFT_OUT`, :data:`KEPT` (for no open node: either), or ``None`` when the
    module's claim does not apply (keep the full parse)."""
    size = len(text)
    with peg.first_end_observation() as seen:
        kind, _end, probed = grammar.root(text + held, 0)
    if kind == peg.FAIL or len(seen) != 1 or seen[0] != ("until", pos, size, delimiter) or len(probed) != len(nodes):
        return None
    answer = LEFT_OUT
    for index, (node, before) in enumerate(zip(probed, nodes)):
        if index == opened and node[:2] == before[:2] and node[2] == size + len(held):
            answer = KEPT
        elif node != before:  # an equal node ends where the certificate's did, at most at size
            return None
    return answer


def growth(pending: str, piece: str, held: str) -> str:
    """What the open field grows by when ``piece`` follows a text whose held suffix ``pending`` was
    left out, and the new text holds back ``held`` (left out too; ``""``: none)."""
    added = pending + piece
    return added[: len(added) - len(held)] if held else added
