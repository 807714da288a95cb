"""Per-test cassettes: ``@pytest.mark.mockoss(cassette=True)`` records a test's exchanges with a
real backend once and replays them offline afterwards, in pytest-recording's vocabulary.

The cassette is a mockoss recording (:class:`mockoss.upstream.Recorder`, the same writer as
``mockoss serve --record``): a ``version: 1`` scenario, one rule per exchange matching its
endpoint and last user message, each answering with the exact bytes received (stream frames
included), secrets never written. Recording puts a pass-through mockoss between the test and the
``--mockoss-real`` server; replaying loads the cassette as the test's scenario, so a request the
cassette does not hold fails the test at teardown with each recorded rule's reason
(``assert_all_requests_were_expected``).

Where: ``cassette=True`` is ``<test file dir>/cassettes/<module>/<name>.yaml`` (pytest-recording's
layout; the name, ``Class.test`` and a hash when the id lost characters, and the old names still
replayed: :mod:`mockoss.pytest_plugin._cassette_names`); ``cassette="name"`` is ``name.yaml`` in that
directory; a value ending in ``.yaml`` or ``.yml`` is a path relative to the test file, recorded
and replayed under exactly that name. ``cassette=False`` turns a farther marker's cassette off.
The mode comes from ``--mockoss-record-mode`` (command line first, as pytest-recording), default
``none``; ``new_episodes`` replays what the cassette holds and appends what it does not
(:mod:`mockoss.pytest_plugin._episodes`). A recording is written whole when the test ends, by one
test per run, and not at all when the real server could not be reached
(:mod:`mockoss.pytest_plugin._cassette_write`).

Timing: recordings keep when each stream frame arrived (``frame_times_ms``), and a replay is paced
from it through the transport pacing (:mod:`mockoss.scenario.replay`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockoss.pytest_plugin._cassette_write import claim, commit, locked, outage_message, scratch_name, watched_recorder

if TYPE_CHECKING:
    from mockoss.pytest_plugin._cassette_names import Located
    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.pytest_plugin._options import MockossOptions, RealTarget
    from mockoss.server.run import ThreadedServer

__all__ = ["RecordMode", "cassette_fixture", "cassette_path", "locate_cassette", "record_mode"]


class RecordMode(str, Enum):
    """How a cassette is used (pytest-recording's ``--record-mode`` values, vcrpy's meanings)."""

    #: Replay only: a missing cassette, or a request it does not hold, fails the test.
    NONE = "none"
    #: Replay the cassette if it exists, else record it (needs ``--mockoss-real``).
    ONCE = "once"
    #: Replay what is recorded and record the requests the cassette does not hold, appending them
    #: (needs ``--mockoss-real``; :mod:`mockoss.pytest_plugin._episodes`); no cassette yet: record it.
    NEW_EPISODES = "new_episodes"
    #: Record every request again, replay none; the cassette is written anew.
    ALL = "all"
    #: Delete the cassette and record it again.
    REWRITE = "rewrite"


def record_mode(config: pytest.Config) -> RecordMode:
    """``--mockoss-record-mode`` (argparse has checked it against :class:`RecordMode`)."""
    return RecordMode(config.getoption("mockoss_record_mode", None) or RecordMode.NONE.value)


def cassette_path(node: pytest.Item, value: str | bool) -> Path:
    """Where ``@pytest.mark.mockoss(cassette=value)`` keeps the test's cassette (module docstring;
    for ``True``: :func:`locate_cassette`'s ``path``).

    Raises:
        TypeError: ``value`` is not ``True`` or a plain name or path.
    """
    return locate_cassette(node, value).path


def locate_cassette(node: pytest.Item, value: str | bool) -> Located:
    """Where the test's cassette is (:class:`mockoss.pytest_plugin._cassette_names.Located`).

    Raises:
        TypeError: ``value`` is not ``True`` or a plain name or path.
    """
    from mockoss.pytest_plugin._cassette_names import Located, locate

    test_file = Path(str(node.path))
    folder = test_file.parent / "cassettes" / test_file.stem
    if value is True:
        return locate(node, folder)
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        path = (test_file.parent / value).resolve()
    elif isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9._-]+", value):
        path = folder / f"{value}.yaml"
    else:
        raise TypeError(f"cassette= takes True, a name (letters, digits, . _ -) or a .yaml path, got {value!r}")
    return Located(path, path)


def _served_names(path: Path) -> list[str]:
    """The model names the recording answered to (its first line's ``--served-model-name``)."""
    with path.open(encoding="utf-8") as file:
        first = file.readline()
    found = re.search(r"--served-model-name (.+)$", first)
    return found.group(1).split() if found else []


@contextmanager
def cassette_fixture(
    request: pytest.FixtureRequest, options: MockossOptions, real: RealTarget | None
) -> Iterator[MockossFixture]:
    """The ``mockoss`` fixture of a test with a cassette: replaying it on the shared server, or
    recording it through a pass-through server of the test's own (see the module docstring).

    Raises:
        pytest.fail.Exception: recording (``once`` without a cassette, ``new_episodes``, ``all``,
            ``rewrite``) without ``--mockoss-real`` (an error at the test's setup, its message alone:
            a ``pytest.UsageError`` raised here printed ~80 lines of fixture source under each test);
            mode ``none`` and the cassette does not exist; another test of
            this run records the same cassette; the real server could not be reached while
            recording (at teardown; nothing written).
    """
    from mockoss.pytest_plugin._fixture import MockossFixture

    located = locate_cassette(request.node, options.cassette)  # type: ignore[arg-type]
    mode = record_mode(request.config)
    if mode in (RecordMode.ALL, RecordMode.REWRITE):  # recorded anew under the new name
        located = dataclasses.replace(located, path=located.new)
    path = located.path
    if mode is RecordMode.NEW_EPISODES and path.exists():
        if real is None:
            pytest.fail(
                f"mockoss: --mockoss-record-mode new_episodes records what cassette {path} does not hold "
                "and needs a real server: add --mockoss-real URL",
                pytrace=False,
            )
        from mockoss.pytest_plugin._episodes import new_episodes

        yield from new_episodes(request.getfixturevalue("mockoss_server"), path, options, real, _served_names(path))
        return
    replay = mode is RecordMode.NONE or (mode is RecordMode.ONCE and path.exists())
    if replay:
        if not path.exists():
            shared = ""
            if located.shared_old is not None:
                shared = (
                    f" ({located.shared_old.name}, its name before mockoss named cassettes by class and a hash, "
                    "may be another test's: another class of the module has this method, or the parameter id "
                    f"lost characters to the file name; if it is this test's, rename it to {path.name})"
                )
            pytest.fail(
                f"mockoss: cassette {path} does not exist{shared}; record it once against a real server: "
                "pytest --mockoss-record-mode once --mockoss-real URL",
                pytrace=False,
            )
        running: ThreadedServer = request.getfixturevalue("mockoss_server")
        fixture = MockossFixture.scripted(running, options)
        fixture.use(str(path))
        names = _served_names(path)
        if names:
            running.server.served_model_names = tuple(names)
            fixture.model = names[0]
        fixture.cassette = path
        yield fixture
        return
    if real is None:
        pytest.fail(
            f"mockoss: recording cassette {path} (--mockoss-record-mode {mode.value}) needs a real server: "
            "add --mockoss-real URL",
            pytrace=False,
        )
    claim(path, request.config, request.node.nodeid)
    yield from _record(located, path, options, real)


def _record(located: Located, path: Path, options: MockossOptions, real: RealTarget) -> Iterator[MockossFixture]:
    """Record into ``mockoss-partial-XXXXXXXX.yaml`` next to ``path``, moved over it when the test
    ends (an older cassette stays until then; ``all``/``rewrite`` with no exchange removes it, as
    before); an unused old-name cassette (``located.legacy``) is removed once recorded anew."""
    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer
    from mockoss.upstream.config import Upstream

    key = real.api_key if real.api_key != "unused" else None
    recorder = watched_recorder(path.parent, scratch_name(path))
    server = MockServer(upstream=Upstream(real.url, api_key=key), recorder=recorder, served_model_names=[real.model])
    running = ThreadedServer(server).start()
    try:
        fixture = MockossFixture(
            server=server, url=running.url, api_key="unused", model=real.model, profile=None, seed=None
        )
        fixture.cassette = path
        yield fixture
    finally:
        running.stop()
        recorder.close()
        if recorder.outages:  # type: ignore[attr-defined]
            recorder.path.unlink(missing_ok=True)
            pytest.fail(outage_message(recorder.outages, path, real.url), pytrace=False)  # type: ignore[attr-defined]
        if recorder.path.exists():
            commit(recorder.path, path)
        else:
            with locked(path):
                path.unlink(missing_ok=True)
        if located.legacy is not None and located.legacy != path:
            located.legacy.unlink(missing_ok=True)  # recorded anew under the new name
