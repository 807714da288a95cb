"""Record every exchange as a scenario step: ``mockoss serve --record DIR``.

The recording is ``DIR/NAME.yaml``, a valid ``version: 1`` scenario with one step per request
that reached a step (requests mockoss rejects itself, such as an invalid body or an unknown
model, are rejected again on replay and take no step), in the order the exchanges finished.
Each step is, by what stood behind the reply:

* ``completion: {raw: …}``: the Harmony completion, when there was one: the scripted step's
  (mock mode) or the upstream's (raw mode). Replayed by the same profile with the same seed,
  request for request, the output is byte-identical, ids included (ids derive from the seed and
  the request's index). ``{{`` in the text is written as ``{{ "{{" }}`` (templates).
* ``error: {status, message[, retry_after]}``: a scripted error, or an upstream failure (502).
* ``replay: {status, content_type, body | frames, …}``: the bytes the client received, when no
  completion can reproduce them (pass-through mode; an exhausted scenario; a completion that does
  not survive re-tokenising its text). See :mod:`mockoss.scenario.replay`. A stream the client
  left early is stored as far as it was relayed.

Every step's ``note`` holds the request's last user message (the prompt, for matching by eye);
with ``redact`` its emails, phone numbers and names are replaced (:mod:`mockoss.upstream.redact`).
With ``match`` each exchange becomes a rule matching its endpoint and that message
(``match.last_user``, anchored, redacted details as wildcards) instead of a step in order.

Secrets are never written, whatever the flags: request headers are not recorded (so no
``Authorization``, ``X-Api-Key``…), nor the upstream's API key; any text equal to an API key or
credential header value the server saw (at least 8 characters) becomes ``[REDACTED]``; and every
secret-shaped string (provider keys, JWTs, bearer tokens, cloud keys, high-entropy tokens) in the
note, the match regex, completions, replay bytes and error messages becomes a stable
``[REDACTED:<kind>:<n>]`` placeholder (:mod:`mockoss.upstream.scrub`).

Durability: an exchange is on disk before its client can hold the whole answer. Each finished
exchange gets a *ticket* (:meth:`Recorder.finish`); the HTTP layer holds the response's body
(:mod:`mockoss.server.durable`) or a relayed stream's last chunk (:mod:`mockoss.upstream.proxy`)
until the ticket is done. One background thread (:mod:`mockoss.upstream.journal`) renders the steps (so the event loop never waits
for YAML), appends them with one ``write`` per batch and ``fsync``s (group commit: under load one
``fsync`` covers every exchange that finished meanwhile). Steps are appended in the order their
exchanges finish (one whose body is 64 KiB or more once its secrets are scanned, so that the
exchanges finishing meanwhile need not wait for it), which for a client sending one request at a
time is the order it sent them
(mock mode numbers them in request order). The file is a complete scenario after every write, so
a ``kill -9`` at any moment leaves a valid scenario holding every exchange a client received; the
app's lifespan closes the recorder after uvicorn's graceful shutdown (SIGTERM, SIGINT) has let
in-flight exchanges finish. A write error is logged and the response still goes out.

Text UTF-8 cannot encode (a lone UTF-16 surrogate, which JSON allows in a request) is written
as a YAML escape the loader reads back as the same string (:mod:`mockoss.upstream.record_yaml`
says why this form), so such an exchange is recorded and replays like any other. The header goes
out with the first step that renders, so a step that fails to render (logged) never leaves the
file without it, and the steps after it are written as usual.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mockoss import __version__
from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.matching import streams
from mockoss.scenario.replay import replay_data
from mockoss.upstream.journal import Journal
from mockoss.upstream.record_yaml import dump as _dump
from mockoss.upstream.record_yaml import exact as _exact
from mockoss.upstream.redact import Redacted, Redactor
from mockoss.upstream.replay_command import ReplayCommand
from mockoss.upstream.scrub import Scrubber, scan_first
from mockoss.upstream.tickets import expect_ticket, ticket_holder

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.base import Reply
    from mockoss.scenario.loader import Step
    from mockoss.server.records import RecordedRequest
    from mockoss.upstream.config import Upstream

    class MockServer(Protocol):
        """What the recorder reads of a :class:`mockoss.server.core.MockServer` (a protocol, so
        that this layer, which the server core calls, does not import the core back)."""

        profile: str
        seed: int | str
        served_model_names: Any
        scenario: Any
        upstream: Upstream | None

__all__ = ["ROUNDTRIP_KEY", "Recorder", "expect_ticket"]

logger = logging.getLogger("mockoss")

#: ``Completion._memo`` key: whether ``Completion.from_text(text)`` gives the same tokens.
ROUNDTRIP_KEY = ("mockoss.record", "roundtrip")
#: Request headers whose values are credentials (scrubbed from the recording if they ever appear).
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "openai-api-key")
#: Shortest credential scrubbed: shorter strings (``EMPTY``) would damage ordinary text.
MIN_SECRET_CHARS = 8
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _roundtrips(completion: Completion) -> bool:
    """Whether ``completion: {raw: text}`` replays the very same tokens."""
    cached = completion._memo.get(ROUNDTRIP_KEY)
    if cached is None:
        from mockoss.harmony import Completion as _Completion

        cached = bool(completion.text) and _Completion.from_text(completion.text).tokens == completion.tokens
        completion._memo[ROUNDTRIP_KEY] = cached
    return bool(cached)


def _reply_data(reply: Reply) -> dict[str, Any]:
    data = reply.frames if reply.streamed else reply.body
    return replay_data(reply.status, reply.media_type, data, dict(reply.headers), reply.abort)


def step_data(reply: Reply, step: Step | None) -> dict[str, Any]:
    """The recorded step for a reply of :meth:`MockServer.respond` (see the module docstring)."""
    if step is not None and step.replay is None and step.error is not None:
        error = {"status": step.error.status, "message": step.error.message}
        if step.error.retry_after is not None:
            error["retry_after"] = step.error.retry_after
        return {"error": error}
    if step is not None and step.replay is None and step.completion is not None and _roundtrips(step.completion):
        return {"completion": {"raw": step.completion.text}}
    return {"replay": _reply_data(reply)}


class Recorder:
    """Writes exchanges to ``directory/name.yaml`` (see the module docstring).

    Args:
        directory: created if missing.
        name: the scenario's name (the file name without ``.yaml``).
        redact: replace personal details in the prompts written to ``note``/``match``.
        match: one rule per exchange, matching its endpoint and last user message.
        seed: seeds the redaction stand-ins.

    Raises:
        ValueError: ``name`` is not a plain file name (letters, digits, ``.``, ``_``, ``-``).
        OSError: the directory cannot be created.
    """

    def __init__(
        self, directory: str | Path, name: str = "recording", *, redact: bool = False, match: bool = False, seed: int | str = 0
    ) -> None:
        if not _NAME.fullmatch(name):
            raise ValueError(f"recording name must be a plain file name (letters, digits, . _ -), got {name!r}")
        self.path = Path(directory) / f"{name}.yaml"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.name, self.match = name, match
        self._redactor = Redactor(seed) if redact else None
        self._scrubber = Scrubber()
        self._started = False
        self._command = ReplayCommand(self.path)
        self._journal = Journal(self.path, self._scrubbed)

    # -- the server side (event loop) -----------------------------------------------------------

    def observe(self, server: MockServer, record: RecordedRequest, reply: Reply, step: Step | None) -> Future[None] | None:
        """:meth:`MockServer.respond`'s hook: record the exchange if it reached a step (or an
        upstream's answer); requests rejected before any step are not recorded.

        Returns the exchange's ticket (done once it is on disk), also left in the list
        :func:`expect_ticket` gave the HTTP layer; ``None`` if nothing is recorded.
        """
        if step is None and record.scenario is None:
            return None
        try:
            transport = step.transport if step is not None else None
            data = step_data(reply, step)
            if transport is not None:
                data["transport"] = transport.model_dump(exclude_defaults=True, mode="json")
        except Exception:  # a recording problem must never change the reply
            logger.exception("mockoss: could not record request %d", record.index)
            return None
        ticket = self.finish(self.begin(), server, record, data)
        holder = ticket_holder()
        if holder is not None:
            holder.append(ticket)
        return ticket

    def begin(self) -> int:
        """Open an exchange whose step comes later (a relayed stream); returns its handle for
        :meth:`finish` or :meth:`skip`. :meth:`flush` waits for every open exchange."""
        self._journal.begin()
        return 0

    def skip(self, slot: int) -> None:
        """Close an exchange that will have no step (the client left before an answer)."""
        self._journal.skip()

    def finish(self, slot: int, server: MockServer, record: RecordedRequest, data: Mapping[str, Any]) -> Future[None]:
        """Record ``data`` (a step mapping without ``note``) for ``record``; steps are written in
        the order their exchanges finish (a body of 64 KiB or more once its secrets are scanned:
        :func:`~mockoss.upstream.scrub.scan_first`). Returns a ticket done once the step is on disk
        (flushed and fsynced): the HTTP layer holds the response's last bytes until then."""
        secrets = {server.upstream.api_key} if server.upstream is not None and server.upstream.api_key else set()
        for name, value in record.header_items:
            if name.lower() in CREDENTIAL_HEADERS:
                secrets.update((value, value.partition(" ")[2]))
        upstream = server.upstream
        item = {
            "index": record.index,
            "endpoint": record.endpoint,
            "raw": record.raw,
            "data": dict(data),
            "secrets": sorted(s for s in secrets if len(s) >= MIN_SECRET_CHARS),
            "server": {
                "profile": server.profile,
                "seed": server.seed,
                "models": list(server.served_model_names),
                "switches": dict(getattr(server.scenario, "switches", None) or {}) if upstream is None else {},
                "upstream": f"{upstream.safe_url} ({'pass-through' if upstream.mode == 'pass' else 'raw'} mode)"
                if upstream is not None
                else None,
            },
        }
        return scan_first(record.raw, lambda: self._journal.submit(item))  # a big body is scanned before it queues

    @property
    def written(self) -> int:
        """Exchanges written so far."""
        return self._journal.written

    @property
    def write_seconds_max(self) -> float:
        """Longest wait of an exchange, from its end to its fsync, in seconds."""
        return self._journal.write_seconds_max

    @property
    def write_seconds_mean(self) -> float:
        """Mean wait of an exchange, from its end to its fsync, in seconds (0 before any)."""
        journal = self._journal
        return journal.write_seconds_total / journal.written if journal.written else 0.0

    def lag_seconds(self) -> float:
        """Age of the oldest exchange finished but not yet on disk (0 when none waits)."""
        return self._journal.lag_seconds()

    def flush(self, timeout: float | None = 10.0) -> None:
        """Wait until every exchange begun so far (streams included) is on disk. Not from the
        serving event loop: a stream it waits for could never end.

        Raises:
            TimeoutError: not done within ``timeout`` seconds.
        """
        if not self._journal.flush(timeout):
            raise TimeoutError(f"mockoss: recording {self.path}: exchanges still open after {timeout} s")

    def close(self) -> None:
        """Write what is queued, stop the writer thread and close the file (idempotent; a later
        exchange reopens it for appending); then the first line gets the final replay command
        (:meth:`ReplayCommand.rewrite <mockoss.upstream.replay_command.ReplayCommand.rewrite>`)."""
        self._journal.close()
        self._command.rewrite()

    def models_listed(self, body: bytes) -> None:
        """The upstream's ``GET /v1/models`` answer, relayed to a client: its ids go into the
        replay command's ``--served-model-name`` (:mod:`mockoss.upstream.replay_command`)."""
        self._command.listed(body)

    # -- the writer thread (mockoss.upstream.journal) -------------------------------------------

    def _scrubbed(self, item: dict[str, Any]) -> str:
        try:
            text = self._render(item)
        except Exception:
            logger.exception("mockoss: could not write request %s to the recording %s", item["index"], self.path)
            return ""
        for secret in item["secrets"]:
            text = text.replace(secret, "[REDACTED]")
        return text

    def _render(self, item: dict[str, Any]) -> str:
        try:
            body = json.loads(item["raw"])
        except (ValueError, RecursionError):
            body = None
        known = self._scrubber.request_secrets(body)
        body = body if isinstance(body, dict) else {}
        model = body.get("model") if isinstance(body.get("model"), str) else None
        last = RequestFacts(item["endpoint"], body, {}, model or "").last("user")
        prompt = last[1] if last is not None else None
        shown, pattern = prompt, None
        if prompt is not None:
            spans = self._scrubber.spans(prompt, known)
            personal = self._redactor.find(prompt) if self._redactor is not None else []
            spans += [p for p in personal if all(p[1] <= s or p[0] >= e for s, e, _ in spans)]
            spans.sort()
            shown = "".join(self._stand_ins(prompt, spans))
            pattern = Redacted(shown, tuple(spans)).pattern(prompt)
        step: dict[str, Any] = {"note": f"{item['endpoint']} request {item['index']}: " + (shown if shown is not None else "(no user message)")}
        step.update(_exact(_scrub_data(item["data"], self._scrubber, known)))
        if not self.match:  # in order: a replayed request to another endpoint is refused, takes no step (StepSpec.endpoint)
            step["endpoint"] = item["endpoint"]
        if not self.match:
            text = _dump([step])
        else:
            # stream too: a streamed and a plain request with one question are two exchanges, and
            # a replay must not answer one with the other's bytes (a breaker's finding: the SDK
            # read a recorded JSON body as a stream of no chunks, without an error)
            match: dict[str, Any] = {"endpoint": item["endpoint"], "stream": streams(item["endpoint"], body)}
            if pattern is not None:
                match["last_user"] = pattern
            text = _dump([{"match": match, "steps": [step]}])
        # The header (or a model note) only once the step has rendered: a step that fails leaves
        # the header to the next one, so the file never holds steps without it.
        notes = "".join(self._command.add(item, model))  # the replay command follows what is recorded
        if not self._started:
            text = self._header(item) + text
        else:
            text = notes + text
        text = self._scrubber.replace_values(text, known)  # the safety net: wherever a found value still is (one pass)
        text.encode("utf-8")  # as the journal will: a failure here is logged with the request and keeps the header
        self._started = True
        return text

    def _stand_ins(self, text: str, spans: list[tuple[int, int, str]]) -> list[str]:
        out, position = [], 0
        for start, end, kind in spans:
            value = text[start:end]
            personal = kind in ("email", "phone", "name") and self._redactor is not None
            out += [text[position:start], self._redactor.stand_in(kind, value) if personal else self._scrubber.placeholder(value, kind)]  # type: ignore[union-attr]
            position = end
        out.append(text[position:])
        return out

    def _header(self, item: dict[str, Any]) -> str:
        server = item["server"]
        source = f"upstream {server['upstream']}" if server["upstream"] else f"profile {server['profile']}"
        head: dict[str, Any] = {"version": 1, "description": f"Recorded by mockoss {__version__} from {source}."}
        if server["switches"]:
            head["switches"] = server["switches"]
        if self.match:
            head["when_exhausted"] = "next_rule"
        lines = self._command.header() + _dump(head)
        return lines + ("rules:\n" if self.match else "steps:\n")


def _scrub_data(data: Mapping[str, Any], scrubber: Scrubber, known: dict[str, str]) -> dict[str, Any]:
    """The step payloads with secrets replaced: completion text, replay bytes, error messages."""
    out = dict(data)
    if "completion" in out:
        out["completion"] = {"raw": scrubber.replace(out["completion"]["raw"], known)}
    if "error" in out:
        out["error"] = {**out["error"], "message": scrubber.replace(out["error"]["message"], known)}
    if "replay" in out:
        replay = dict(out["replay"])
        for key in ("body", "abort"):
            if isinstance(replay.get(key), str):
                replay[key] = scrubber.replace(replay[key], known)
        if "frames" in replay:
            replay["frames"] = scrubber.replace_all(list(replay["frames"]), known)
        out["replay"] = replay
    return out
