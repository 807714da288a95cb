"""Did-you-mean hints for names looked up by the user (scenarios, switches, profiles, fault kinds).

Instead of listing every valid name (the shipped scenarios alone make a 1,200-character line), an
unknown name gets the closest valid names (:func:`difflib.get_close_matches`) and the command that
lists them all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, choices: Iterable[str], listing: str, *, limit: int = 3) -> str:
    """``"did you mean 'clean-answer'? (mockoss scenarios lists all 39)"``, or, with nothing close,
    ``"mockoss scenarios lists all 39"``. ``listing`` names where the full list is."""
    options = list(choices)
    close = difflib.get_close_matches(name, options, limit, cutoff=0.6)
    where = f"{listing} lists all {len(options)}"
    if not close:
        return where
    return f"did you mean {' or '.join(repr(c) for c in close)}? ({where})"
