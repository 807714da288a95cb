"""Choose the answer of a ``pick`` step for one request, seeded and reproducible.

``deck`` mode deals option indices from a shuffled deck that holds option *i* ``weight[i]`` times,
reshuffled (with a new seed) for every cycle of ``sum(weights)`` uses. The *k*-th use of the step
always gets the same answer, so the counts over any whole cycle are exactly the weights however
concurrent clients interleave: what an outcome distribution (``mockoss eval``) needs to match the
scripted proportions. ``draw`` mode draws every use independently with the same seed scheme, like
sampling a real model.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import TYPE_CHECKING, Any

from mockoss.scenario.compiled import Step

if TYPE_CHECKING:
    from mockoss.scenario.loader import Rule

__all__ = ["choose", "replaced"]

#: Step's fields, in order: all set by its ``__init__``, which does nothing else.
_STEP_FIELDS = tuple(field.name for field in dataclasses.fields(Step))


def replaced(step: Step, **changes: Any) -> Step:
    """``dataclasses.replace(step, **changes)``, at 1.3 us instead of 2.2 (per request for a
    templated or ``pick`` step): the fields are copied straight into a new object, as Step's
    frozen ``__init__`` would set them, without ``replace``'s generic field walk and keyword call.
    Only for :class:`Step` (no ``__post_init__``, every field an ``__init__`` argument; tested).
    """
    new = object.__new__(Step)
    for name in _STEP_FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(step, name))
    return new


@functools.lru_cache(maxsize=512)
def _deck(weights: tuple[int, ...], key: str) -> tuple[int, ...]:
    deck = [option for option, weight in enumerate(weights) for _ in range(weight)]
    random.Random(key).shuffle(deck)
    return tuple(deck)


def choose(rule: Rule, step: Step, use: int, seed: int | str) -> Step:
    """The answer for the ``use``-th (0-based) request this ``pick`` step answers.

    The chosen option keeps the step's position (``index``) and, unless it sets its own, the
    step's ``transport``. ``seed`` is the scenario's ``seed`` or the server's.
    """
    weights = tuple(weight for weight, _ in step.options)
    key = f"{seed}/{rule.index}/{step.index}"
    if step.pick_mode == "deck":
        cycle, position = divmod(use, sum(weights))
        option = _deck(weights, f"{key}/{cycle}")[position]
    else:
        option = random.Random(f"{key}/{use}").choices(range(len(weights)), weights)[0]
    chosen = step.options[option][1]
    return replaced(chosen, index=step.index, transport=chosen.transport or step.transport, times=step.times)
