"""The ``mockoss_leak_score`` fixture: score a leak detector case by case over the leak corpus
(:mod:`mockoss.corpus`) and print each detector's precision and recall after the run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mockoss.corpus import LeakCase, LeakScore

__all__ = ["LeakScores", "mockoss_leak_score", "terminal_summary"]

_SCORES: pytest.StashKey[LeakScores] = pytest.StashKey()


class LeakScores:
    """Scores by detector name, filled by :meth:`check` (public for type hints)."""

    def __init__(self) -> None:
        self.by_detector: dict[str, LeakScore] = {}

    def check(self, detector: Callable[[str], bool], case: LeakCase, *, name: str | None = None) -> None:
        """Run ``detector`` on ``case``, count the answer, and fail the test when it is wrong.

        Raises:
            AssertionError: a false positive or a missed leak, naming the case, its form and source.
        """
        __tracebackhide__ = True
        from mockoss.corpus import LeakScore

        label = name or getattr(detector, "__name__", "detector")
        score = self.by_detector.setdefault(label, LeakScore(name=label))
        predicted = bool(detector(case.text))
        if not score.add(case, predicted):
            kind = "false positive (a hard negative flagged)" if predicted else "missed leak"
            raise AssertionError(f"{label}: {kind}: {case.id} [{case.form}] {case.text!r}; form seen in {case.source}")


@pytest.fixture(scope="session")
def mockoss_leak_score(request: pytest.FixtureRequest) -> LeakScores:
    """Scores a leak detector over mockoss's leak corpus; precision and recall print after the run."""
    scores = request.config.stash.setdefault(_SCORES, LeakScores())
    return scores


def terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Print ``mockoss leak corpus: NAME: precision P (a/b), recall R (c/d), N wrong`` per detector."""
    scores = config.stash.get(_SCORES, None)
    if scores is None or not scores.by_detector:
        return
    terminalreporter.section("mockoss leak corpus")
    for score in scores.by_detector.values():
        terminalreporter.write_line(score.report().splitlines()[0])
