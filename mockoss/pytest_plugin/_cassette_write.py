"""Writing a cassette safely: one recording test per cassette and run, whole files only, and no
cassette of an outage.

* **One writer per run.** Two tests of one run recording one cassette (``cassette="conc"`` on
  parametrised tests, mode ``all``) overwrote each other, and under ``pytest -n 2`` interleaved
  two recordings into one invalid file (sixteenth-session breaker, finding 2). A test that starts
  recording *claims* the cassette for the run (:func:`claim`); another test of the same run that
  would record it fails at setup naming both tests, as a vcrpy user expects when two tests claim
  one cassette. Replaying one cassette from several tests stays allowed. The run is pytest-xdist's
  ``testrunuid`` (one for all workers of a run), else a random id per run.
* **Whole files.** A recording is written to a file next to the cassette
  (``mockoss-partial-XXXXXXXX.yaml``) and moved over it with ``os.replace`` when the test ends
  (:func:`commit`), so a reader never sees half a cassette and a failed run leaves the old one.
  The move, and ``new_episodes``' read-append-write, hold an exclusive ``fcntl`` lock on a file
  named by a hash of the cassette's path under ``$TMPDIR/mockoss-cassettes-UID`` (not in the
  cassette folder a project commits); that file also holds the claim. Without ``fcntl``
  (Windows) there is no lock; the move is still atomic.
* **No outage.** A request the real server could not answer (connection refused, DNS, timeout:
  mockoss's own 502 ``mockoss: upstream URL is unreachable``, recorded as an ``error:`` step, not
  an upstream's own 5xx, which is recorded as its bytes) means the recording is not written: the
  test fails saying so (finding 6: a mistyped ``--mockoss-real`` left a cassette replaying a 502
  for ever). vcrpy likewise records nothing when no response came.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shlex
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from mockoss.upstream import Recorder

__all__ = ["claim", "commit", "locked", "outage_message", "scratch_name", "watched_recorder"]

#: The run id made for a run pytest-xdist gives none (kept on the run's config).
_RUN: pytest.StashKey[str] = pytest.StashKey()


def run_id(config: pytest.Config) -> str:
    """The id of this test run: pytest-xdist's ``testrunuid`` (shared by the run's workers), else
    a random one kept on ``config`` (one per run, also for runs in one process, as pytester's)."""
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and workerinput.get("testrunuid"):
        return str(workerinput["testrunuid"])
    return config.stash.setdefault(_RUN, uuid.uuid4().hex)


def _lock_file(path: Path) -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    folder = Path(tempfile.gettempdir()) / f"mockoss-cassettes-{uid}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.lock"


@contextmanager
def locked(path: Path) -> Iterator[IO[str]]:
    """Hold the exclusive lock of cassette ``path`` (blocking); yields the lock file, open for
    reading and writing (it holds the claim: run id, then node id)."""
    fd = os.open(_lock_file(path), os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+", encoding="utf-8") as file:
        if fcntl is not None:
            fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield file
        finally:
            if fcntl is not None:
                fcntl.flock(file, fcntl.LOCK_UN)


def claim(path: Path, config: pytest.Config, nodeid: str) -> None:
    """Claim cassette ``path`` for recording by test ``nodeid`` in this run.

    Raises:
        pytest.fail.Exception: another test of this run claimed it (the message names both).
    """
    run = run_id(config)
    with locked(path) as file:
        seen_run, _, seen_node = file.read().partition("\n")
        if seen_run == run and seen_node and seen_node != nodeid:
            pytest.fail(
                f"mockoss: cassette {path} is recorded in this run by {seen_node}; {nodeid} would record it too "
                "and one recording would overwrite the other: give each test a cassette of its own "
                "(cassette=True, or a name per test)",
                pytrace=False,
            )
        file.seek(0)
        file.truncate()
        file.write(f"{run}\n{nodeid}")
        file.flush()


def scratch_name(path: Path) -> str:
    """The name (without ``.yaml``) of the file a recording goes to, next to cassette ``path``
    until the test ends: ``mockoss-partial-XXXXXXXX`` (a plain name, as the recorder requires)."""
    return f"mockoss-partial-{secrets.token_hex(4)}"


def commit(recorded: Path, path: Path) -> None:
    """Move the finished recording ``recorded`` (in ``path``'s folder) over cassette ``path``,
    under the cassette's lock; the replay command on its first line names ``path``."""
    text = recorded.read_text(encoding="utf-8")
    first, newline, rest = text.partition("\n")
    text = _renamed(first, recorded.name, path.name) + newline + rest
    with recorded.open("w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    with locked(path):
        os.replace(recorded, path)


def watched_recorder(directory: Path, name: str) -> Recorder:
    """A :class:`mockoss.upstream.Recorder` (``match=True``) that also keeps, in ``outages``, the
    message of every exchange the upstream could not answer (``error:`` steps; module docstring)."""
    from mockoss.upstream import Recorder

    class Watched(Recorder):
        outages: list[str]

        def finish(self, slot: int, server: Any, record: Any, data: Any) -> Any:
            if "error" in data:
                self.outages.append(str(data["error"].get("message", "")))
            return super().finish(slot, server, record, data)

    recorder = Watched(directory, name, match=True)
    recorder.outages = []
    return recorder


def outage_message(outages: list[str], path: Path, url: str) -> str:
    """The failure of a recording the real server could not answer (module docstring)."""
    return (
        f"mockoss: the real server {url} did not answer {len(outages)} request(s) ({outages[0]}); "
        f"nothing was written to cassette {path} (it would replay the outage): check --mockoss-real and record again"
    )


def _renamed(first: str, old: str, new: str) -> str:
    """The replay command ``first`` with its ``--scenario`` path's file name ``old`` made ``new``,
    shell-quoted as :mod:`mockoss.upstream.replay_command` quotes it (a name with a space:
    ``cassette="my run.yaml"``); a line without that path is returned as is."""
    found = re.search(r"--scenario ('[^']*'|\S+)", first)
    if found is None:
        return first
    where = shlex.split(found.group(1))[0]
    if not where.endswith(old):
        return first
    quoted = shlex.quote(where[: len(where) - len(old)] + new)
    return first[: found.start(1)] + quoted + first[found.end(1) :]
