"""Per-test cassettes: ``@pytest.mark.mockoss(cassette=True)`` records a test's exchanges with a
real backend once and replays them offline afterwards, in pytest-recording's vocabulary.

The cassette is a mockoss recording (:class:`mockoss.upstream.Recorder`, the same writer as
``mockoss serve --record``): a ``version: 1`` scenario, one rule per exchange matching its
endpoint and last user message, each answering with the exact bytes received (stream frames
included), secrets never written. Recording puts a pass-through mockoss between the test and the
``--mockoss-real`` server; replaying loads the cassette as the test's scenario, so a request the
cassette does not hold fails the test at teardown with each recorded rule's reason
(``assert_all_requests_were_expected``).

Where: ``cassette=True`` is ``<test file dir>/cassettes/<module>/<test name>.yaml`` (pytest-recording's
layout); ``cassette="name"`` is ``name.yaml`` in that directory; a value ending in ``.yaml`` is a
path relative to the test file. The mode comes from ``--mockoss-record-mode`` (command line
first, as pytest-recording), default ``none``; ``new_episodes`` replays what the cassette holds
and appends what it does not (:mod:`mockoss.pytest_plugin._episodes`).

Timing: recordings keep when each stream frame arrived (``frame_times_ms``), and a replay is paced
from it through the transport pacing (:mod:`mockoss.scenario.replay`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.pytest_plugin._options import MockossOptions, RealTarget
    from mockoss.server.run import ThreadedServer

__all__ = ["RecordMode", "cassette_fixture", "cassette_path", "record_mode"]


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
    """Where ``@pytest.mark.mockoss(cassette=value)`` keeps the test's cassette (module docstring).

    Raises:
        TypeError: ``value`` is not ``True`` or a plain name or path.
    """
    test_file = Path(str(node.path))
    folder = test_file.parent / "cassettes" / test_file.stem
    if value is True:
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", node.name).strip("-")
        return folder / f"{name}.yaml"
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        return (test_file.parent / value).resolve()
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9._-]+", value):
        return folder / f"{value}.yaml"
    raise TypeError(f"cassette= takes True, a name (letters, digits, . _ -) or a .yaml path, got {value!r}")


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
        pytest.UsageError: recording (``once`` without a cassette, ``new_episodes``, ``all``,
            ``rewrite``) without ``--mockoss-real``.
        pytest.fail.Exception: mode ``none`` and the cassette does not exist.
    """
    from mockoss.pytest_plugin._fixture import MockossFixture

    path = cassette_path(request.node, options.cassette)  # type: ignore[arg-type]
    mode = record_mode(request.config)
    if mode is RecordMode.NEW_EPISODES and path.exists():
        if real is None:
            raise pytest.UsageError(
                f"mockoss: --mockoss-record-mode new_episodes records what cassette {path} does not hold "
                "and needs a real server: add --mockoss-real URL"
            )
        from mockoss.pytest_plugin._episodes import new_episodes

        yield from new_episodes(request.getfixturevalue("mockoss_server"), path, options, real, _served_names(path))
        return
    replay = mode is RecordMode.NONE or (mode is RecordMode.ONCE and path.exists())
    if replay:
        if not path.exists():
            pytest.fail(
                f"mockoss: cassette {path} does not exist; record it once against a real server: "
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
        raise pytest.UsageError(
            f"mockoss: recording cassette {path} (--mockoss-record-mode {mode.value}) needs a real server: "
            "add --mockoss-real URL"
        )
    yield from _record(path, mode, options, real)


def _record(path: Path, mode: RecordMode, options: MockossOptions, real: RealTarget) -> Iterator[MockossFixture]:
    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer
    from mockoss.upstream import Recorder
    from mockoss.upstream.config import Upstream

    if path.exists():  # all, rewrite: written anew (new_episodes comes here only without a cassette)
        path.unlink()
    key = real.api_key if real.api_key != "unused" else None
    recorder = Recorder(path.parent, path.stem, match=True)
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
