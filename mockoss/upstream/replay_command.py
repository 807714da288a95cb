"""The command a recording's first line gives for replaying it, kept true as the recording grows.

A recording (:class:`mockoss.upstream.record.Recorder`) begins with
``# Replay it byte for byte with: mockoss serve --scenario PATH --profile P --seed S --served-model-name M…``.
What that command needs is known only as the exchanges come (the sixteenth session's newcomer,
items 2, 3 and 8, found each part missing), so :class:`ReplayCommand` follows them:

* ``--served-model-name``: every model the recorded requests named (a pass-through front relays
  any name; a replay answers only the names it serves: 404 otherwise), after the ids the
  upstream's ``GET /v1/models`` listed, in its order, when a client asked for them: that probe is
  not a step (a replay answers probes from its profile and they take no step), so the replay
  lists the same names, in its profile's shape. Without an upstream (a recording of mockoss's own
  replies): the server's served names, as before.
* ``--profile``: the front's, if it serves every endpoint recorded; else the first registered
  profile that does (a pass-through front relays every route, Ollama's ``POST /api/chat`` under
  profile vllm too, but a replaying profile answers only its own routes); else the front's, and
  a comment names the endpoints no single profile serves.
* ``--scenario``: the recording's path relative to the working directory the recording was
  started in, when it is inside it (run the command from there), so that a recording or cassette
  committed with a project does not carry the machine's absolute path; a file outside it keeps
  its absolute path.

While recording, the file is only appended to (:mod:`mockoss.upstream.journal`: complete after
every write), so a change comes as a comment before the step that caused it; :meth:`rewrite` puts
the final command on the first line when the recorder closes.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mockoss.upstream.record_yaml import comment

__all__ = ["COMMAND_PREFIX", "ReplayCommand", "display_path", "replay_profile"]

logger = logging.getLogger("mockoss")

#: How a recording's first line begins; the rest of the line is the command.
COMMAND_PREFIX = "# Replay it byte for byte with: "


def display_path(path: Path, start: str | None = None) -> str:
    """``path`` relative to ``start`` (default: the working directory), ``/``-separated, when it
    is inside it; else as an absolute path (a file outside the working tree is not one a project
    commits, and ``../../tmp/x.yaml`` reads worse than ``/tmp/x.yaml``)."""
    where = Path(os.path.abspath(path))
    try:
        return where.relative_to(os.path.abspath(start or os.getcwd())).as_posix()
    except ValueError:
        return str(where)


def _endpoints_of(profile: str) -> frozenset[str] | None:
    """The endpoint names ``profile`` serves; ``None`` if it cannot be built here."""
    from mockoss.profiles.registry import ProfileError, get_profile

    try:
        return frozenset(get_profile(profile, warn=False).endpoints)
    except ProfileError:  # an unknown name: leave the front's profile in the command
        return None


def replay_profile(front: str, endpoints: Iterable[str]) -> tuple[str, list[str]]:
    """The profile that replays ``endpoints`` (names of :data:`mockoss.endpoints.ENDPOINTS`) and
    the endpoints no registered profile serves together with the others (then ``front`` is kept).

    ``front`` when it serves them all; else the first profile of
    :data:`mockoss.profiles.registry.PROFILES` that does (``ollama`` for ``ollama.chat`` + ``chat``)."""
    wanted = set(endpoints)
    served = _endpoints_of(front)
    if served is None or wanted <= served:
        return front, []
    from mockoss.profiles.registry import PROFILES

    for name in PROFILES:
        if wanted <= (_endpoints_of(name) or frozenset()):
            return name, []
    return front, sorted(wanted - served)


class ReplayCommand:
    """The replay command of one recording (see the module docstring); used on the recorder's
    writer thread, except :meth:`listed`, which any thread may call.

    Args:
        path: the recording file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = display_path(path)  # at construction: the working directory the recording starts in
        self._used: list[str] = []  # models named by recorded requests, first use first
        self._listed: list[str] = []  # ids of the upstream's GET /v1/models
        self._endpoints: list[str] = []
        self._server: dict[str, Any] | None = None
        #: The command on the file's first line (``None`` before the header is written).
        self.first: str | None = None
        #: The command last written (first line or a later comment).
        self.latest: str | None = None

    def listed(self, body: bytes) -> None:
        """Note the model ids of an upstream ``GET /v1/models`` answer (``{"data": [{"id": …}]}``);
        an answer of another shape is ignored."""
        try:
            data = json.loads(body)["data"]
            ids = [entry["id"] for entry in data if isinstance(entry.get("id"), str)]
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        self._listed = list(dict.fromkeys([*self._listed, *ids]))

    def add(self, item: dict[str, Any], model: str | None) -> list[str]:
        """Take one exchange (the recorder's item: ``endpoint``, ``index``, ``server``) and its
        request's model; returns the comment lines to write before its step (none before the
        header), each ending in a newline."""
        server = self._server = item["server"]
        notes: list[str] = []
        if model and model not in self._used:
            self._used.append(model)
            if self.latest is not None and model not in self._listed:
                notes.append(
                    f"# request {item['index']} names model {comment(model)}: the replay needs it in --served-model-name\n"
                )
        endpoint = item["endpoint"]
        if endpoint not in self._endpoints:
            self._endpoints.append(endpoint)
            profile, alone = (
                replay_profile(server["profile"], self._endpoints) if server["upstream"] else (server["profile"], [])
            )
            if profile != server["profile"] and endpoint not in (_endpoints_of(server["profile"]) or {endpoint}):
                logger.warning(
                    "mockoss: recording %s: request %s is %s, which profile %s does not serve: replay it with --profile %s",
                    self.where,
                    item["index"],
                    _route(endpoint),
                    server["profile"],
                    profile,
                )
            if alone:
                notes.append(
                    f"# request {item['index']} is {_route(endpoint)}: no profile serves all of "
                    f"{', '.join(_route(e) for e in self._endpoints)}; a replay refuses the requests to the ones "
                    f"--profile {profile} does not serve\n"
                )
        command = self.command()
        if self.latest is not None and command != self.latest:
            notes.append(COMMAND_PREFIX + comment(command) + "\n")
        self.latest = command
        return notes

    def header(self) -> str:
        """The first line (the current command); call after :meth:`add` of the first exchange."""
        self.first = self.latest = self.command()
        return COMMAND_PREFIX + comment(self.first) + "\n"

    def command(self) -> str:
        """The replay command for what has been recorded so far."""
        server = self._server or {"profile": "vllm", "seed": 0, "models": [], "upstream": None}
        if server["upstream"]:
            models = list(dict.fromkeys([*self._listed, *self._used])) or list(server["models"])
            profile = replay_profile(server["profile"], self._endpoints)[0]
        else:
            models, profile = list(server["models"]), server["profile"]
        # shell-quoted: a path or model id with a space or quote must survive a copy-paste (a review's finding)
        return (
            f"mockoss serve --scenario {shlex.quote(str(self.where))} --profile {shlex.quote(profile)} "
            f"--seed {shlex.quote(str(server['seed']))} --served-model-name {' '.join(map(shlex.quote, models))}"
        )

    def rewrite(self) -> None:
        """Put the current command on the file's first line if it changed since the header was
        written (a new file replaces the old one: ``os.replace``). Errors are logged."""
        if self.first is None or self._server is None:
            return
        command = self.command()
        if command == self.first:
            return
        try:
            text = self.path.read_bytes()
            head, newline, rest = text.partition(b"\n")
            if not head.startswith(COMMAND_PREFIX.encode()):
                return
            spare = self.path.with_name(self.path.name + ".rewrite")
            with spare.open("wb") as file:
                file.write((COMMAND_PREFIX + comment(command)).encode() + newline + rest)
                file.flush()
                os.fsync(file.fileno())
            os.replace(spare, self.path)
            self.first = command
        except OSError:
            logger.exception("mockoss: could not update the replay command on the first line of %s", self.path)


def _route(endpoint: str) -> str:
    """``ollama.chat (POST /api/chat)`` (:func:`mockoss.endpoints.route_label`)."""
    from mockoss.endpoints import route_label

    return route_label(endpoint)
