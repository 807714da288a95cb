"""The argparse ``type`` checks of the numbers the ``mockoss`` commands take (``serve``, ``eval``).

One place for both commands, which held near-copies (``mockoss.cli_parser`` and
``mockoss.eval.command`` until the eighteenth session) that disagreed: ``mockoss eval --timeout inf``
was accepted (``float("inf") > 0``) where ``mockoss serve --request-timeout inf`` and
``--tool-check-budget-ms inf`` were refused. Both now refuse it, the stricter of the two:
``float()`` reads ``inf``, ``infinity`` and ``nan`` (any case, signed: Python's ``float`` built-in),
and none of them is a bound. An infinite ``eval --timeout`` never fires (CPython
``Lib/asyncio/timeouts.py``: ``timeout(delay)`` is a deadline at ``loop.time() + delay``), so one
server that accepts the connection and never answers held ``mockoss eval`` for ever, all ``K``
slots of ``--concurrency`` with it, and its table never printed; an infinite request timeout left
idle connections open for ever (the sixteenth session's breaker, item 11, for ``nan``). Who wants
no bound writes a large number, which still prints in the messages that quote it.

Only :mod:`argparse` and :mod:`math` are imported: ``mockoss serve`` builds its parser with these at start.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["at_least_one", "more_than_zero"]


def at_least_one(unit: str, outcome: str | None = None) -> Callable[[str], int]:
    """The argparse ``type`` of a whole count of ``unit`` (singular, e.g. ``"byte"``) of at least 1.

    The returned function maps the argument's text to an ``int`` >= 1.

    Args:
        unit: what is counted, singular; the messages add an ``s``.
        outcome: what every request would get if the count were allowed below 1 (``"every request
            would get 413"``), said in the message; ``None``: nothing said.

    Raises (the returned function):
        argparse.ArgumentTypeError: ``expected a whole number of bytes, got '1.5'`` for text that
            is not a whole number (``int()`` refuses it), ``expected at least 1 byte, got 0
            (every request would get 413)`` for one below 1; argparse prints it as a usage error
            (exit 2).
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number of {unit}s, got {text!r}") from None
        if value < 1:
            why = f" ({outcome})" if outcome else ""
            raise argparse.ArgumentTypeError(f"expected at least 1 {unit}, got {value}{why}")
        return value

    return parse


def more_than_zero(units: str, short: str | None = None) -> Callable[[str], float]:
    """The argparse ``type`` of a finite number of ``units`` (plural, e.g. ``"seconds"``) above 0.

    The returned function maps the argument's text to a ``float`` with ``0 < value < inf``.

    Args:
        units: what is measured, plural, as the message for text that is no number says it
            (``"milliseconds"``).
        short: the same as the other messages say it (``"ms"``); ``None``: ``units``.

    Raises (the returned function):
        argparse.ArgumentTypeError: ``expected a number of seconds, got 'soon'`` for text ``float()``
            refuses; ``expected more than 0 seconds, got '0'`` for 0 and below (``-inf`` too);
            ``expected more than 0 seconds and finite, got 'inf'`` for ``inf`` and ``nan`` (module
            docstring).
    """
    short = short or units

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {units}, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected more than 0 {short}, got {text!r}")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected more than 0 {short} and finite, got {text!r}")
        return value

    return parse
