"""The leak corpus (mockoss.corpus) and its helpers, measured with a detector written like the
second seed's: hermes-agent PR #84231 flags any answer holding the `to=functions.<tool>` marker."""

from __future__ import annotations

import re

import pytest

from mockoss.corpus import LeakScore, evaluate, leak_cases

#: Like the seed's `_TOOL_CALL_LEAK_PATTERN` (NousResearch/hermes-agent PR #84231): the marker anywhere.
SEED_MARKER = re.compile(r"to=functions\.[\w.\-]+")


def seed_detector(text: str) -> bool:
    return SEED_MARKER.search(text) is not None


def test_the_corpus_is_big_enough_and_every_case_cites_a_source():
    cases = list(leak_cases)
    assert len(cases) >= 60
    assert sum(not c.leak for c in cases) >= 20
    assert len({c.id for c in cases}) == len(cases)
    for case in cases:
        assert re.search(r"#\d+|PR #\d+|docs/", case.source), case
        assert case.form in {"bare", "role", "stripped", "tokens", "truncated", "json", "prose", "code", "json-answer"}
    assert {c.form for c in cases if not c.leak} == {"prose", "code", "json-answer"}


def test_the_seed_detector_scores_as_its_review_predicted():
    score = evaluate(seed_detector)
    # The PR's stated boundary: JSON envelopes carry no marker, so every one is missed.
    missed = {case.id for case, predicted in score.wrong if not predicted}
    assert {c.id for c in leak_cases if c.form == "json"} <= missed
    # The review's point 2: prose that quotes the marker is flagged.
    flagged = {case.id for case, predicted in score.wrong if predicted}
    assert {"prose-explains-format", "prose-quotes-format-inline", "code-block-harmony-example"} <= flagged
    assert 0.5 < score.precision < 1.0 and 0.5 < score.recall < 1.0
    assert score.true_positives + score.false_positives + score.true_negatives + score.false_negatives == len(leak_cases)
    assert score.report().startswith(
        f"seed_detector: precision {score.precision:.2f} ({score.true_positives}/"
        f"{score.true_positives + score.false_positives}), recall {score.recall:.2f}"
    )


def test_precision_and_recall_arithmetic():
    score = LeakScore()
    case = leak_cases[0]
    negative = next(c for c in leak_cases if not c.leak)
    assert score.add(case, True) and not score.add(negative, True) and not score.add(case, False)
    assert (score.precision, score.recall) == (0.5, 0.5)
    assert LeakScore().precision == 1.0 and LeakScore().recall == 1.0


def test_parametrize_helper_and_the_summary_line(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import re
        from mockoss.corpus import leak_cases

        def marker(text):
            return re.search(r"to=functions\\.[\\w.\\-]+", text) is not None

        @leak_cases.parametrize(forms=["bare", "prose"])
        def test_gate(leak_case, mockoss_leak_score):
            mockoss_leak_score.check(marker, leak_case)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    bare = sum(1 for c in leak_cases if c.form == "bare")
    prose = sum(1 for c in leak_cases if c.form == "prose")
    score = evaluate(seed_detector, [c for c in leak_cases if c.form in ("bare", "prose")], name="marker")
    result.assert_outcomes(passed=bare + prose - len(score.wrong), failed=len(score.wrong))
    result.stdout.fnmatch_lines(
        [
            "*= mockoss leak corpus =*",
            score.report().splitlines()[0],
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(["*false positive (a hard negative flagged): prose-explains-format*"])


@pytest.mark.parametrize("form", ["bare", "role", "stripped", "tokens", "json"])
def test_every_leak_form_has_cases(form):
    assert any(c.form == form and c.leak for c in leak_cases)
