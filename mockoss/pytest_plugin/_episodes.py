"""``--mockoss-record-mode new_episodes``: replay what a cassette holds, record what it does not.

vcrpy's ``new_episodes`` (the mode pytest-recording passes through, kevin1024/vcrpy
``vcr/record_mode.py`` and ``docs/usage.rst`` "new_episodes"): a request the cassette holds is
replayed; any other request goes to the real server and the exchange is appended to the cassette.

How: the test talks to a small front server of its own. Each request goes first to the shared
fake server with the cassette loaded; when no recorded rule answers it (the fake server logs the
request as unmatched: ``RecordedRequest.problem`` set, no ``rule``; or refuses the model it names,
one the cassette was not recorded with: :func:`_not_held`), the front asks a
pass-through mockoss in front of ``--mockoss-real`` instead (the same recorder as the other record
modes: stream frames, frame timing, secrets scrubbed) and relays that answer. Both answers are
relayed chunk by chunk as they arrive, so a replay keeps its pacing. At teardown the new
exchanges' rules are appended to the cassette's ``rules:`` (recorded rules first, so a request
the cassette already held still gets its recorded answer), the models they named are added to
the served names on its first line (the replay command, which a replay answers to), and the
result is loaded once to check it is a valid scenario. A request unmatched by the cassette is
therefore not a loud miss in this mode: it was recorded. ``mockoss.requests`` is the cassette
server's log: a request that went to the real server appears there with the 400 (or the unknown
model's 404) the cassette gave before it was sent on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.pytest_plugin._options import MockossOptions, RealTarget
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer

__all__ = ["append_rules", "new_episodes"]

#: Request headers the front passes on (the body's type, what the client accepts, mockoss's own).
_PASSED = re.compile(r"content-type|accept|x-mockoss-.*")
#: Response headers relayed back (transfer framing is the front's own).
_RELAYED = ("content-type", "retry-after", "x-request-id", "content-encoding")


class _Front:
    """A uvicorn server on a free loopback port, in a daemon thread, serving :meth:`_app`."""

    def __init__(self, replay: ThreadedServer, recorder_url: str) -> None:
        import uvicorn

        from mockoss.server.run import base_url, bind

        self.replay, self.recorder_url = replay, recorder_url
        #: Indices (in the fake server's log) of the requests the cassette did not hold, which were
        #: sent to the real server and recorded.
        self.sent_on: set[int] = set()
        self._sock = bind("127.0.0.1", 0)
        self.url = base_url(self._sock)
        self._uvicorn = uvicorn.Server(
            uvicorn.Config(self._app(), log_level="warning", access_log=False, lifespan="on")
        )
        self._uvicorn.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self) -> _Front:
        self._thread.start()
        ready = threading.Event()
        for _ in range(1000):
            if self._uvicorn.started or not self._thread.is_alive():
                break
            ready.wait(0.01)
        if not self._uvicorn.started:
            raise RuntimeError(f"mockoss: the new_episodes front did not start on {self.url}")
        return self

    def stop(self) -> None:
        self._uvicorn.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def _app(self) -> Any:  # a Starlette app
        import httpx2
        from starlette.applications import Starlette
        from starlette.background import BackgroundTask
        from starlette.responses import StreamingResponse
        from starlette.routing import Route

        from mockoss.endpoints import ENDPOINTS

        generation = {spec.path for spec in ENDPOINTS.values()}
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(600.0, connect=10.0))
        server: MockServer = self.replay.server
        lock = asyncio.Lock()  # one request at a time asks the cassette, so its log entries are its own

        async def handle(request: Request) -> Response:
            body = await request.body()
            headers = {k: v for k, v in request.headers.items() if _PASSED.fullmatch(k)}
            path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            target = self.replay.url
            answer = None
            if request.method == "POST" and request.url.path in generation:
                async with lock:
                    before = len(server.requests)
                    answer = await _send(client, request.method, self.replay.url + path, body, headers)
                    names = server.served_model_names
                    missed = [r.index for r in list(server.requests)[before:] if _not_held(r, names)]
                if missed:
                    await answer.aclose()
                    answer, target = None, self.recorder_url
                    self.sent_on.update(missed)
            if answer is None:
                answer = await _send(client, request.method, target + path, body, headers)
            relayed = {k: answer.headers[k] for k in _RELAYED if k in answer.headers}
            return StreamingResponse(
                answer.aiter_raw(),
                status_code=answer.status_code,
                headers=relayed,
                background=BackgroundTask(answer.aclose),
            )

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            yield
            await client.aclose()

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
        return Starlette(routes=[Route("/{path:path}", handle, methods=methods)], lifespan=lifespan)


def _not_held(record: Any, names: tuple[str, ...]) -> bool:
    """Whether the cassette server's log entry ``record`` (a
    :class:`~mockoss.server.records.RecordedRequest`) is a request the cassette does not hold: no
    recorded rule matched it (``problem`` set, no ``rule``), or it names a model the cassette was
    not recorded with (``names``, its served names) and the profile refused it with its 404 before
    any rule was asked (vLLM's ``The model `X` does not exist.``). The second went unrecorded until
    the eighteenth session (task C2 item 3): the test got that 404, where vcrpy's ``new_episodes``
    sends every request the cassette does not hold to the real server."""
    if record.rule is not None:
        return False
    if record.problem:
        return True
    if record.status != 404 or record.scenario is not None:
        return False
    body = record.body
    model = body.get("model") if isinstance(body, dict) else None
    return isinstance(model, str) and model not in names


async def _send(client: Any, method: str, url: str, body: bytes, headers: dict[str, str]) -> Any:
    return await client.send(client.build_request(method, url, content=body, headers=headers), stream=True)


def append_rules(cassette: Path, recorded: Path) -> int:
    """Append ``recorded``'s rules (a recording made with ``match=True``) to ``cassette``'s
    ``rules:`` list, and ``recorded``'s served names that ``cassette``'s first line lacks to that
    line (:func:`_with_names`); returns how many rules were added. The read, append and write
    hold the cassette's lock, and the new text replaces the file whole (a temporary file moved
    over it), so two tests appending to one cassette at once (``pytest -n 2``) both land
    (:mod:`mockoss.pytest_plugin._cassette_write`; ``tests/test_c2_append_rules.py``: two
    processes, nothing lost).

    Raises:
        ValueError: either file does not end with its ``rules:`` list, or the merged text is not a
            valid scenario (the cassette is then left as it was).
    """
    from mockoss.pytest_plugin._cassette_write import locked, scratch_name
    from mockoss.scenario.loader import ScenarioError, load_scenario

    new = recorded.read_text(encoding="utf-8")
    with locked(cassette):
        old = cassette.read_text(encoding="utf-8")
        tails = []
        for text, where in ((old, cassette), (new, recorded)):
            _, sep, tail = text.partition("\nrules:\n")
            if not sep or re.search(r"^\S", tail, re.MULTILINE) and not re.fullmatch(r"(?:(?:- |  |#).*\n?)*", tail):
                raise ValueError(f"mockoss: {where} does not end with its rules: list")
            tails.append(tail)
        added = sum(1 for line in tails[1].splitlines() if line.startswith("- "))
        if not added:
            return 0
        merged = cassette.with_name(scratch_name(cassette) + ".yaml")
        first, newline, rest = old.partition("\n")
        text = _with_names(first, new.partition("\n")[0]) + newline + rest
        merged.write_text(text.rstrip("\n") + "\n" + tails[1], encoding="utf-8")
        try:
            load_scenario(str(merged))
        except (ScenarioError, OSError) as exc:
            merged.unlink(missing_ok=True)
            raise ValueError(f"mockoss: appending the new exchanges to {cassette} failed: {exc}") from None
        os.replace(merged, cassette)
    return added


#: The served names at the end of a recording's first line (:mod:`mockoss.upstream.replay_command`).
_SERVED = re.compile(r" --served-model-name (.+)$")


def _with_names(first: str, other: str) -> str:
    """The cassette's first line ``first`` (its replay command, which a replay reads its served
    names from: :func:`mockoss.pytest_plugin._cassette._served_names`) with the
    ``--served-model-name`` names of the appended recording's first line ``other`` that it lacks
    added after its own, so that a replay answers to the models the appended exchanges named (a
    replay answers only the names it serves: 404 otherwise). A line that is not a replay command
    is returned as it is."""
    from mockoss.upstream.replay_command import COMMAND_PREFIX

    mine, theirs = _SERVED.search(first), _SERVED.search(other)
    if not (first.startswith(COMMAND_PREFIX) and other.startswith(COMMAND_PREFIX) and mine and theirs):
        return first
    try:
        held, named = shlex.split(mine.group(1)), shlex.split(theirs.group(1))
    except ValueError:  # an unbalanced quote: not a line mockoss wrote
        return first
    added = [name for name in dict.fromkeys(named) if name not in held]
    return " ".join([first, *map(shlex.quote, added)])


def new_episodes(
    running: ThreadedServer, path: Path, options: MockossOptions, real: RealTarget, names: list[str]
) -> Iterator[MockossFixture]:
    """The ``mockoss`` fixture in ``new_episodes`` mode for an existing cassette (module
    docstring): ``running`` is the shared fake server, ``names`` the model names the cassette
    was recorded with (its first line)."""
    from mockoss.pytest_plugin._cassette_write import outage_message, watched_recorder
    from mockoss.pytest_plugin._fixture import MockossFixture
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer
    from mockoss.upstream.config import Upstream

    class EpisodesFixture(MockossFixture):
        """Requests the cassette did not hold were recorded, not missed: the loud-miss check skips them."""

        def _log(self, member: str) -> list[Any]:
            log = super()._log(member)
            if member != "assert_all_requests_were_expected":
                return log
            return [r for r in log if r.index not in front.sent_on]

    fixture = EpisodesFixture.scripted(running, options)
    fixture.use(str(path))
    if names:
        running.server.served_model_names = tuple(names)
        fixture.model = names[0]
    fixture.cassette = path
    with tempfile.TemporaryDirectory(prefix="mockoss-episodes-") as scratch:
        key = real.api_key if real.api_key != "unused" else None
        recorder = watched_recorder(Path(scratch), path.stem)
        upstream = MockServer(
            upstream=Upstream(real.url, api_key=key), recorder=recorder, served_model_names=[real.model]
        )
        recording = ThreadedServer(upstream).start()
        front = _Front(running, recording.url).start()
        fixture.url, fixture.base_url = front.url, f"{front.url}/v1"
        try:
            yield fixture
        finally:
            front.stop()
            recording.stop()
            recorder.close()
        if recorder.outages:  # type: ignore[attr-defined]
            pytest.fail(outage_message(recorder.outages, path, real.url), pytrace=False)  # type: ignore[attr-defined]
        if front.sent_on and recorder.path.exists():
            try:
                append_rules(path, recorder.path)
            except ValueError as exc:
                pytest.fail(str(exc), pytrace=False)
