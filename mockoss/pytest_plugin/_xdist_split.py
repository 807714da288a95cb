"""``mockoss_session`` under pytest-xdist: refuse a distribution that splits a module's conversation.

``mockoss_session`` (module scope) carries one scripted conversation from test to test of a
module, in file order. pytest-xdist builds a module-scoped fixture once per worker, so when its
scheduler sends a module's tests to several workers, each worker's server starts the conversation
over, and a test meant for the third turn gets the first (t18 breaker, finding 5: under ``pytest
-n 2``, whose default is ``--dist load``, a four-test conversation failed with a bare ``assert
None``, depending on which worker got which test). Which tests share a worker is decided at run
time, so the same suite passes or fails from run to run.

What each ``--dist`` mode keeps together, from pytest-xdist 3.8.0's schedulers
(``xdist/scheduler/*.py`` ``_split_scope``; ``load`` and ``worksteal`` hand out single tests):

- ``loadfile``: a file; ``each``: every test runs on every worker; ``no``: no workers;
- ``loadscope``: the tests of a module outside classes, and each class apart (``nodeid.rsplit("::", 1)[0]``);
- ``loadgroup``: the tests whose node ids end in the same ``@NAME`` (the worker adds it for an
  ``xdist_group(NAME)`` mark, ``xdist/remote.py``; the ids are read as the worker has them, as
  the scheduler gets them: a module-level mark did not group the tests in a run with
  pytest-xdist 3.8.0, so the message does not offer it); any other test alone;
- ``load``, ``worksteal``: each test alone.

So the fixture's setup fails, naming the modes that keep the module together, when this module's
``mockoss_session`` tests fall into more than one unit of the run's mode. Why an error rather than
a warning: the conversation cannot work as written under such a split, its failure says nothing
of why and comes and goes between runs, and a warning would sit in the summary beside it; the
error comes on every run, before any request, with the fix. A module with one such test, or whose
tests all stay in one unit, runs as before.

A worker does not see the run's ``--dist`` (pytest-xdist sets its ``dist`` option to ``"no"``,
``xdist/remote.py`` ``setup_config``): the controller passes it in ``workerinput`` through the
``pytest_configure_node`` hook (:func:`pytest_configure_node`, registered by the plugin module).
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["pytest_configure_node", "split_message"]

#: The ``workerinput`` key carrying the controller's ``--dist`` to its workers.
_KEY = "mockoss_dist"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's hook on the controller, once per worker: pass on ``--dist``."""
    node.workerinput[_KEY] = node.config.getoption("dist", None)


def _unit(nodeid: str, dist: str) -> str | None:
    """The unit of work ``dist`` keeps ``nodeid`` in (module docstring); ``None``: one for all."""
    if dist in ("load", "worksteal"):
        return nodeid
    if dist == "loadscope":
        return nodeid.rsplit("::", 1)[0]
    if dist == "loadgroup":
        return nodeid.split("@")[-1] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid
    return None  # loadfile, each, no, or a mode this module does not know: not refused


def split_message(request: pytest.FixtureRequest) -> str | None:
    """Why this module's ``mockoss_session`` tests would be split across xdist workers, or ``None``.

    ``request``: the ``mockoss_session`` fixture's request (module scope). Returns ``None`` outside
    an xdist worker, under a mode that keeps them together, or with one such test.
    """
    workerinput = getattr(request.config, "workerinput", None)
    dist = workerinput.get(_KEY) if isinstance(workerinput, dict) else None
    if not isinstance(dist, str):
        return None
    path = request.node.path
    tests = [
        item.nodeid
        for item in request.session.items
        if getattr(item, "path", None) == path and "mockoss_session" in getattr(item, "fixturenames", ())
    ]
    units = {_unit(nodeid, dist) for nodeid in tests}
    if len(tests) < 2 or len(units) < 2:
        return None
    how = "single tests" if dist in ("load", "worksteal") else "groups that split this module"
    return (
        f"mockoss_session: pytest-xdist's --dist {dist} hands out {how}, so the {len(tests)} tests of "
        f"{request.node.nodeid} that share this module's conversation may run on different workers, each "
        "starting it over. Run with --dist loadfile (or --dist loadscope, with these tests outside classes "
        "or in one class) (README.md, section 'Use it from pytest')."
    )
