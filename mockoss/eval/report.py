"""Outcome distributions: counting, the printed tables, and the JSON form ``--save`` writes.

The JSON form (``mockoss eval --json`` / ``--save``)::

    {"url": "http://127.0.0.1:8000/v1", "request": "leak.json", "n": 40,
     "outcomes": [{"outcome": "200 — reasoning, mcp_call(tool/mcp)", "count": 31, "share": 0.775}, …],
     "elapsed_s": 12.345}

``share`` is ``count / n`` rounded to 4 decimals; ``elapsed_s`` is wall-clock seconds, rounded
to 3 decimals (the only field that differs between two runs of a deterministic scenario).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EvalResult", "ResultFileError", "compare_rows", "format_compare", "format_share", "format_table"]


class ResultFileError(ValueError):
    """A ``--compare`` file is not the JSON ``mockoss eval --save`` writes; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class EvalResult:
    """The outcome distribution of one run.

    Attributes:
        url: the base URL requests went to (``…/v1``).
        request: the request file as given on the command line.
        n: requests sent.
        outcomes: ``(outcome key, count)`` pairs, by count descending then key (so the order does
            not depend on which concurrent request finished first).
        elapsed_s: wall-clock seconds for the whole run.
    """

    url: str
    request: str
    n: int
    outcomes: tuple[tuple[str, int], ...]
    elapsed_s: float = 0.0

    @classmethod
    def from_keys(cls, url: str, request: str, keys: Iterable[str], elapsed_s: float = 0.0) -> EvalResult:
        """Count outcome keys (one per request) into a result."""
        return cls.from_counts(url, request, Counter(keys), elapsed_s)

    @classmethod
    def from_counts(cls, url: str, request: str, counts: Mapping[str, int], elapsed_s: float = 0.0) -> EvalResult:
        """A result from ``{outcome key: count}``; ``n`` is the sum of the counts."""
        counts = {key: count for key, count in counts.items() if count}
        ordered = tuple(sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])))
        return cls(url, request, sum(counts.values()), ordered, elapsed_s)

    def count(self, outcome: str) -> int:
        """How many requests had ``outcome`` (0 if none)."""
        return dict(self.outcomes).get(outcome, 0)

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready dict described in the module docstring."""
        return {
            "url": self.url,
            "request": self.request,
            "n": self.n,
            "outcomes": [
                {"outcome": key, "count": count, "share": round(count / self.n, 4) if self.n else 0.0}
                for key, count in self.outcomes
            ],
            "elapsed_s": round(self.elapsed_s, 3),
        }

    @classmethod
    def from_json(cls, data: Any) -> EvalResult:
        """Read back what :meth:`to_json` produced (``n`` is recomputed from the counts).

        Raises:
            ResultFileError: ``data`` lacks ``outcomes`` or an entry lacks ``outcome``/``count``.
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("outcomes"), list):
            raise ResultFileError('not a mockoss eval result: expected an object with an "outcomes" list')
        counts: Counter[str] = Counter()
        for index, entry in enumerate(data["outcomes"]):
            if not (
                isinstance(entry, Mapping)
                and isinstance(entry.get("outcome"), str)
                and isinstance(entry.get("count"), int)
                and entry["count"] >= 0
            ):
                raise ResultFileError(f'outcomes[{index}]: expected {{"outcome": string, "count": integer >= 0}}')
            counts[entry["outcome"]] += entry["count"]
        elapsed = data.get("elapsed_s")
        elapsed_s = float(elapsed) if isinstance(elapsed, (int, float)) else 0.0
        return cls.from_counts(str(data.get("url", "")), str(data.get("request", "")), counts, elapsed_s)


def format_share(count: int, n: int) -> str:
    """``count / n`` as a percentage with at most one decimal and no trailing zeros:
    ``31/40 → "77.5%"``, ``4/40 → "10%"``, ``1/3 → "33.3%"``, ``0/0 → "0%"``."""
    if not n:
        return "0%"
    return f"{100 * count / n:.1f}".removesuffix(".0") + "%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    """First column left-aligned, the others right-aligned, two spaces between columns."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_table(result: EvalResult) -> str:
    """The distribution as a text table (no trailing newline)::

        outcome                              count  share
        200 — reasoning, mcp_call(tool/mcp)     31  77.5%
        500 — InternalServerError: …             9  22.5%
        total                                   40   100%
    """
    rows = [[key, str(count), format_share(count, result.n)] for key, count in result.outcomes]
    rows.append(["total", str(result.n), format_share(result.n, result.n)])
    return _table(["outcome", "count", "share"], rows)


def _cell(count: int, n: int) -> str:
    return f"{count} ({format_share(count, n)})" if count else "0"


def compare_rows(before: EvalResult, after: EvalResult) -> list[tuple[str, int, int]]:
    """``(outcome, before count, after count)`` over the union of both runs' outcomes, ordered by
    the before count, then the after count (both descending), then the key, so outcomes new in
    the after run come last."""
    old, new = dict(before.outcomes), dict(after.outcomes)
    keys = sorted(old.keys() | new.keys(), key=lambda key: (-old.get(key, 0), -new.get(key, 0), key))
    return [(key, old.get(key, 0), new.get(key, 0)) for key in keys]


def format_compare(before: EvalResult, after: EvalResult) -> str:
    """A before/after table over the union of both runs' outcomes (no trailing newline)::

        outcome                                  before     after
        200 — reasoning, mcp_call(tool/mcp)  31 (77.5%)         0
        200 — reasoning, message               1 (2.5%)  34 (85%)
        total                                        40        40

    Rows in :func:`compare_rows` order; a count of 0 prints as ``0``.
    """
    rows = [[key, _cell(old, before.n), _cell(new, after.n)] for key, old, new in compare_rows(before, after)]
    rows.append(["total", str(before.n), str(after.n)])
    return _table(["outcome", "before", "after"], rows)
