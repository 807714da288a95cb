"""Labelled corpora for gates: a leak corpus to measure tool-call leak detectors.

``leaks.yaml`` (package data) holds visible model outputs, each labelled ``leak`` (a tool call
that escaped as text) or not, with its ``form`` and the public report where the form was seen.
Forms of leaks: ``bare`` (``to=functions.X {…}``), ``role`` (``assistant to=…``), ``stripped``
(special tokens removed: ``assistantcommentary to=…``), ``tokens`` (Harmony markup in content),
``truncated`` (cut inside the header or arguments), ``json`` (a JSON envelope naming the tool).
Hard negatives: ``prose`` quoting the format, ``code`` blocks explaining tools, ``json-answer``
(JSON that is an answer, not a call).

Measure a detector (``text -> bool``) in one call, or parametrize a test over the cases::

    from mockoss.corpus import evaluate, leak_cases

    def test_gate_scores():
        score = evaluate(my_detector)
        assert score.precision >= 0.95, score.report()

    @leak_cases.parametrize()
    def test_gate_case(leak_case, mockoss_leak_score):
        mockoss_leak_score.check(my_detector, leak_case)   # fails on a wrong label; the run's
                                                           # precision and recall print at the end
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

__all__ = ["LeakCase", "LeakScore", "evaluate", "leak_cases"]

#: A detector: the visible text of an answer → ``True`` when it is a leaked tool call.
Detector = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class LeakCase:
    """One labelled output: ``text`` is what the client sees; ``leak`` the label; ``form`` the
    shape (``bare``, ``json``, ``prose``, …); ``source`` where the form was seen."""

    id: str
    text: str
    leak: bool
    form: str
    source: str

    @property
    def hard_negative(self) -> bool:
        return not self.leak


@dataclass
class LeakScore:
    """Confusion counts of one detector over a set of cases, and the cases it got wrong."""

    name: str = "detector"
    true_positives: int = 0
    false_positives: int = 0
    true_negatives: int = 0
    false_negatives: int = 0
    wrong: list[tuple[LeakCase, bool]] = field(default_factory=list)

    def add(self, case: LeakCase, predicted: bool) -> bool:
        """Count one prediction; returns whether it matches the label."""
        if case.leak and predicted:
            self.true_positives += 1
        elif case.leak:
            self.false_negatives += 1
        elif predicted:
            self.false_positives += 1
        else:
            self.true_negatives += 1
        if predicted != case.leak:
            self.wrong.append((case, predicted))
        return predicted == case.leak

    @property
    def precision(self) -> float:
        """Of the outputs flagged, the share that are leaks (1.0 when nothing was flagged)."""
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        """Of the leaks, the share flagged (1.0 when there are none)."""
        leaks = self.true_positives + self.false_negatives
        return self.true_positives / leaks if leaks else 1.0

    def report(self) -> str:
        """``detector: precision 0.95 (19/20), recall 0.48 (19/40), 22 wrong`` and one line per miss."""
        flagged = self.true_positives + self.false_positives
        leaks = self.true_positives + self.false_negatives
        lines = [
            (
                f"{self.name}: precision {self.precision:.2f} ({self.true_positives}/{flagged}), "
                f"recall {self.recall:.2f} ({self.true_positives}/{leaks}), {len(self.wrong)} wrong"
            )
        ]
        for case, predicted in self.wrong:
            kind = "false positive" if predicted else "missed leak"
            lines.append(f"  {kind}: {case.id} [{case.form}] {case.text[:70]!r} ({case.source})")
        return "\n".join(lines)


@cache
def _load() -> tuple[LeakCase, ...]:
    text = (importlib.resources.files("mockoss.corpus") / "leaks.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return tuple(LeakCase(**case) for case in data["cases"])


class _LeakCases(Sequence[LeakCase]):
    """The leak corpus as a sequence, plus :meth:`parametrize` for pytest."""

    def __getitem__(self, index: Any) -> Any:
        return _load()[index]

    def __len__(self) -> int:
        return len(_load())

    def forms(self) -> list[str]:
        """The forms, in corpus order."""
        return list(dict.fromkeys(case.form for case in _load()))

    def parametrize(self, argname: str = "leak_case", *, forms: Iterable[str] | None = None) -> Any:
        """``pytest.mark.parametrize`` over the cases (``forms`` keeps only those forms), ids = case ids."""
        import pytest

        wanted = None if forms is None else set(forms)
        cases = [c for c in _load() if wanted is None or c.form in wanted]
        return pytest.mark.parametrize(argname, cases, ids=[c.id for c in cases])


#: The shipped leak corpus (``len(leak_cases)`` cases; ``leak_cases.parametrize()`` for pytest).
leak_cases = _LeakCases()


def evaluate(detector: Detector, cases: Iterable[LeakCase] | None = None, *, name: str | None = None) -> LeakScore:
    """Run ``detector`` over ``cases`` (default: the whole corpus) and count its answers."""
    score = LeakScore(name=name or getattr(detector, "__name__", "detector"))
    for case in _load() if cases is None else cases:
        score.add(case, bool(detector(case.text)))
    return score
