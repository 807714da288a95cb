"""The bounds of a ``pick`` step's weights, checked when a scenario is validated
(:class:`mockoss.scenario.schema.StepSpec`); no imports, so the schema can use them without
importing the player's modules (:mod:`mockoss.scenario.pick` deals the cards).

A ``deck`` of up to :data:`MAX_DECK_CARDS` cards is built and shuffled whole, as earlier mockoss
built every deck (and so deals what it dealt); a larger one is dealt through a keyed permutation
of its positions, never built (:mod:`mockoss.scenario.pick`). Both modes take sums up to
:data:`MAX_WEIGHTS`. Before session 16 a weight of 20,000,000 took 14.7 s for every client, 10**9
~16 GB (the sixteenth session's breaker, item 7).
"""

from __future__ import annotations

__all__ = ["MAX_DECK_CARDS", "MAX_WEIGHTS", "weights_problem"]

#: Largest ``sum(weights)`` of a ``pick_mode: deck`` step whose deck is built and shuffled whole
#: (~0.6 us a card: 10,000 cards ~6 ms, on the lock every client waits on), one per cycle.
MAX_DECK_CARDS = 10_000
#: Largest ``sum(weights)`` of a ``pick`` step: ``random.choices`` (``pick_mode: draw``) scales its
#: float ``random()`` by the sum (an ``OverflowError`` past ~1.8e308, a 500 before session 16),
#: and below 2**53 every weight is exact; a deck that large is dealt by position as any other.
MAX_WEIGHTS = 10**15


def weights_problem(weights: list[int], mode: str) -> str | None:
    """Why a ``pick`` step's ``weights`` cannot be dealt in ``mode`` (``deck``/``draw``), or ``None``.

    ``weights``: the options' weights (each >= 1). The message names the bound and says that
    weights are ratios (``99`` and ``1`` pick as ``990`` and ``10`` do); the schema
    (:class:`mockoss.scenario.schema.StepSpec`) raises it as a ``ValueError``."""
    total = sum(weights)
    if total <= MAX_WEIGHTS:
        return None
    shown = f"{total:,}" if total < 10**18 else f"a {len(str(total)):,}-digit number"
    return (
        f"pick: the weights add up to {shown}, above the {MAX_WEIGHTS:,} a pick step takes (pick_mode: {mode}). "
        "Weights are ratios: divide them (99 and 1 pick as 990 and 10 do)"
    )
