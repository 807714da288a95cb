"""Adding a step that carries settings to another one is refused instead of dropping them.

``final("a") + fault("truncated", final("b"))`` gave a step without the fault, silently (noticed
by an engineer of issue 9's 14th session): the test then scripted a clean answer where a
truncated one was meant. The settings of the left-hand step are kept, as before.
"""

from __future__ import annotations

import pytest

from mockoss.steps import fault, final, reasoning, tool_call


@pytest.mark.parametrize(
    "right",
    [
        fault("truncated", final("b")),
        final("b").with_times(2),
        final("b").with_note("n"),
        final("b").with_optional(),
        final("b").with_transport(ttft_ms=5),
    ],
)
def test_a_step_with_settings_cannot_be_added(right) -> None:
    with pytest.raises(TypeError, match="settings would be lost"):
        final("a") + right
    with pytest.raises(TypeError, match="settings would be lost"):
        reasoning("r") + final("a") + right


def test_plain_sums_and_the_left_steps_settings_still_work() -> None:
    step = (reasoning("r") + tool_call("get_weather", {"city": "Oslo"})).with_fault("truncated") + final("x")
    assert step.fault == {"kind": "truncated"} and len(step.messages) == 3
    assert (final("a").with_times(2) + (reasoning("r") + final("b"))).times == 2


def test_the_advice_of_the_error_works_and_fault_takes_a_sum() -> None:
    """The error's advice read "add the messages first", which users followed as
    ``fault("truncated", final("a") + final("b"))``: an AttributeError deep in ``fault()``
    (this session's reviewer). ``fault()`` now takes a sum of messages; a step with settings is a
    clear TypeError there too."""
    with pytest.raises(TypeError, match=r"\(final\('a'\) \+ final\('b'\)\)\.with_fault\('truncated'\)"):
        final("a") + fault("truncated", final("b"))
    summed = fault("truncated", final("a") + final("b"))
    assert summed == (final("a") + final("b")).with_fault("truncated")
    assert fault("truncated", reasoning("r"), final("a") + final("b")).messages == (reasoning("r") + final("a") + final("b")).messages
    with pytest.raises(TypeError, match="a step made of messages only"):
        fault("truncated", final("a").with_times(2))
