"""``mockoss_session`` under pytest-xdist: a ``--dist`` mode that would split a module's
conversation across workers fails the fixture's setup with the fix; modes that keep it together
run it (mockoss/pytest_plugin/_xdist_split.py; t18 breaker report, finding 5: under ``pytest -n 2``,
default ``--dist load``, a four-test conversation failed with a bare ``assert None``, or passed,
depending on which worker got which test). The units each mode keeps together are pytest-xdist
3.8.0's (``xdist/scheduler/*.py`` ``_split_scope``).
"""

from __future__ import annotations

import pytest
from plugin_support import plugin_pytester  # noqa: F401  (autouse fixture)

from mockoss.pytest_plugin._xdist_split import _unit

pytest_plugins = ["pytester"]

_ASK = """
import openai
import pytest

pytestmark = pytest.mark.mockoss(scenario="clean-tool-call")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def ask(m):
    client = openai.OpenAI(base_url=m.base_url, api_key="x", max_retries=0)
    return client.chat.completions.create(
        model=m.model, messages=[{"role": "user", "content": "w?"}], tools=TOOLS).choices[0].message
"""

# Four tests, one conversation: a tool call, then the answer (clean-tool-call), then two checks of the log.
CONVERSATION = (
    _ASK
    + """
def test_1(mockoss_session):
    assert ask(mockoss_session).tool_calls

def test_2(mockoss_session):
    assert ask(mockoss_session).content

def test_3(mockoss_session):
    assert len(mockoss_session.requests) == 2

def test_4(mockoss_session):
    assert len(mockoss_session.requests) == 2
"""
)

ALONE = (
    _ASK
    + """
def test_only(mockoss_session):
    assert ask(mockoss_session).tool_calls

def test_other(mockoss):
    assert mockoss.base_url
"""
)

TWO_CLASSES = (
    _ASK
    + """
class TestFirst:
    def test_1(self, mockoss_session):
        assert ask(mockoss_session).tool_calls

class TestSecond:
    def test_2(self, mockoss_session):
        assert ask(mockoss_session).content
"""
)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", *args)


def test_dist_load_refuses_a_module_conversation_with_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_conversation=CONVERSATION, test_alone=ALONE)
    result = _run(pytester)  # -n 2 alone: pytest-xdist's default --dist load
    # The four conversation tests error at setup, every run; a module with one such test runs.
    result.assert_outcomes(passed=2, errors=4)
    text = result.stdout.str()
    assert "mockoss_session: pytest-xdist's --dist load hands out single tests" in text
    assert "--dist loadfile" in text
    assert "assert None" not in text


def test_dist_loadfile_runs_the_conversation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_conversation=CONVERSATION)
    _run(pytester, "--dist", "loadfile").assert_outcomes(passed=4)


def test_dist_loadscope_refuses_a_conversation_over_two_classes_only(pytester: pytest.Pytester) -> None:
    # loadscope keeps a module's functions together but sends each class apart.
    pytester.makepyfile(test_conversation=CONVERSATION, test_classes=TWO_CLASSES)
    result = _run(pytester, "--dist", "loadscope")
    result.assert_outcomes(passed=4, errors=2)
    assert "--dist loadscope hands out groups that split this module" in result.stdout.str()


def test_without_xdist_nothing_changes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_conversation=CONVERSATION, test_classes=TWO_CLASSES)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=6)


@pytest.mark.parametrize(
    ("nodeid", "dist", "unit"),
    [
        ("t.py::test_a", "load", "t.py::test_a"),
        ("t.py::test_a", "worksteal", "t.py::test_a"),
        ("t.py::C::test_a[x]", "loadscope", "t.py::C"),
        ("t.py::test_a[x]", "loadscope", "t.py"),
        ("t.py::test_a@conv", "loadgroup", "conv"),  # the worker's node id of an xdist_group('conv') test
        ("t.py::test_a[u@v]", "loadgroup", "t.py::test_a[u@v]"),  # '@' in a parameter is no group
        ("t.py::test_a", "loadfile", None),
        ("t.py::test_a", "each", None),
    ],
)
def test_units_follow_xdist_schedulers(nodeid: str, dist: str, unit: str | None) -> None:
    assert _unit(nodeid, dist) == unit
