"""The ``mockoss_remote`` fixture: one test's session on a shared ``mockoss serve`` (``--mockoss-url``).

Each test gets its own test id (``<worker>-<run>-<hash of the test's node id>``; ``<run>`` is a
random nonce made once per test process, :data:`RUN_NONCE`), so any number of test processes
(``pytest -n N``, several CI jobs running the same suite at once) can share one server and get what
a server of their own would give: the session has its own scenario, rule cursors, request numbering (ids) and
request log (:mod:`mockoss.server.control`). Without the nonce, two runs of one suite (two
branches, a Python matrix) sent the same ids and took each other's steps and deleted each other's
sessions (sixteenth-session breaker, finding 1). The id only names the session: a session's
replies come from the server's seed and the scenario (``ControlPlane._copy`` in
:mod:`mockoss.server.control` copies ``seed``, never the id), so they are byte-identical whatever
the nonce. Clients need no header: ``base_url`` carries the
test id as a path prefix (``URL/s/ID/v1``). The control calls send ``$MOCKOSS_ADMIN_TOKEN`` when set.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from typing import Any

import httpx2

__all__ = ["RUN_NONCE", "RemoteSession"]

#: This process's part of every test id: 8 random hex digits, made once per process (each xdist
#: worker has its own), so that two runs of one suite against one server never share an id.
RUN_NONCE = secrets.token_hex(4)


class RemoteSession:
    """One test's session on a shared mockoss server.

    Attributes:
        url: the server's root URL, e.g. ``http://127.0.0.1:8000``.
        test_id: this test's id on it, ``<worker>-<run>-<16 hex digits of sha256(nodeid)>``
            (``<run>``: ``run``, default :data:`RUN_NONCE`).
        base_url: ``URL/s/TEST_ID/v1``, for OpenAI-compatible clients.
        root_url: ``URL/s/TEST_ID``, for native APIs (``/api/chat``).
    """

    def __init__(
        self, url: str, nodeid: str, worker: str = "main", token: str | None = None, run: str | None = None
    ) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")
        self.test_id = f"{worker}-{run or RUN_NONCE}-{hashlib.sha256(nodeid.encode()).hexdigest()[:16]}"
        self.root_url = f"{self.url}/s/{self.test_id}"
        self.base_url = f"{self.root_url}/v1"
        headers = {"x-mockoss-test-id": self.test_id}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self._http = httpx2.Client(base_url=self.url, headers=headers, timeout=30)

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        """One control call; a server that cannot be reached is an ``AssertionError`` naming the
        URL and how to start one (a newcomer's dead ``--mockoss-url`` got a bare ``ConnectError``)."""
        try:
            return self._http.request(method, path, **kwargs)
        except httpx2.TransportError as exc:
            raise AssertionError(
                f"mockoss: the shared server at {self.url} (--mockoss-url) did not answer {method} {path}: "
                f"{type(exc).__name__}: {exc}. Start it first (mockoss serve --port PORT) and check that "
                f"{self.url}/mockoss/ready answers 200."
            ) from None

    def _check(self, response: httpx2.Response) -> httpx2.Response:
        if response.status_code >= 400:
            raise AssertionError(
                f"mockoss control call {response.request.method} {response.request.url.path} -> {response.status_code}: {response.text}"
            )
        return response

    def use(self, scenario: Any, *more: Any, name: str | None = None) -> dict[str, Any]:
        """Load ``scenario`` into this test's session and select it. Takes what ``mockoss.use``
        takes (a shipped name, a YAML file, a scenario mapping, a bare list of steps, or
        :mod:`mockoss.steps` builder items, each positional item one step or rule) and YAML text.
        Returns the server's summary (name, rules, steps).

        Raises:
            mockoss.scenario.loader.ScenarioError: no such file or shipped scenario (with the
                nearest names; an empty or over-long name too).
            TypeError: not one of the above (:mod:`mockoss.pytest_plugin._use_args`, shared with
                the ``mockoss`` fixture).
            AssertionError: the server refused the scenario (the message has file, line and field).
        """
        from mockoss.pytest_plugin._use_args import read_use_args
        from mockoss.scenario.loader import scenario_source
        from mockoss.scenario.schema import FORMAT_VERSION

        kind, value = read_use_args(scenario, more)
        if kind == "data":
            data = value if "version" in value else {"version": FORMAT_VERSION, **value}
            content, content_type, name = json.dumps(data).encode(), "application/json", name or "inline"
        elif kind == "text":
            content, content_type, name = value.encode("utf-8", "surrogatepass"), "application/yaml", name or "inline"
        else:
            content, _, stem = scenario_source(value)
            content_type, name = "application/yaml", name or stem
        response = self._call(
            "POST", "/mockoss/scenario", params={"name": name}, content=content, headers={"content-type": content_type}
        )
        return self._check(response).json()  # type: ignore[no-any-return]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """This test's request log: every route it called, oldest first (see ``GET /mockoss/requests``)."""
        return self._check(self._call("GET", "/mockoss/requests")).json()  # type: ignore[no-any-return]

    def reset(self) -> None:
        """Rewind this test's scenarios and clear its log."""
        self._check(self._call("POST", "/mockoss/reset"))

    def close(self) -> None:
        """Drop the session on the server and close the control client."""
        try:
            self._http.delete(f"/mockoss/sessions/{self.test_id}")
        except httpx2.HTTPError:
            pass
        self._http.close()


def remote_session(url: str, nodeid: str) -> RemoteSession:
    """A :class:`RemoteSession` for the test ``nodeid`` (the xdist worker id from the environment)."""
    return RemoteSession(
        url, nodeid, os.environ.get("PYTEST_XDIST_WORKER", "main"), os.environ.get("MOCKOSS_ADMIN_TOKEN") or None
    )
