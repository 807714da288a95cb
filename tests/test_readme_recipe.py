"""The README's "Test your agent's tool loop" recipe runs as written (through pytester here;
tests/test_packaging_recipe.py runs it from a built wheel in a fresh virtual environment)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_recipe() -> str:
    """The Python block of the README section "Test your agent's tool loop"."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Test your agent's tool loop") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_tool_loop_recipe_passes(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_tool_loop=readme_recipe())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_the_release_timeline_example_passes(pytester):
    """The README's "Releases and timelines" before/after example (vllm#53269's streamed
    ``finish_reason`` on a tool call cut by ``max_tokens``) runs as written, on both releases:
    a newcomer found the example ended in ``...`` and had to sweep ``max_tokens`` to see it."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index('To test "before and after a fix"') :]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_timeline=block)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
