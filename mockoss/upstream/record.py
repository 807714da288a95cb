"""Record every exchange as a scenario step: ``mockoss serve --record DIR``.

The recording is ``DIR/NAME.yaml``, a valid ``version: 1`` scenario with one step per request
that reached a step (requests mockoss rejects itself, such as an invalid body or an unknown
model, are rejected again on replay and take no step), in the order the server numbered them.
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

Never written: request headers (so no ``Authorization``, ``X-Api-Key``…), the upstream's API key,
and, as a safety net, any text equal to an API key or credential header value the server saw (at
least 8 characters) is replaced by ``[REDACTED]`` wherever it would appear.

Writing happens on one background thread, so the event loop never waits for YAML or the disk;
:meth:`Recorder.flush` waits for it. The file is rewritten from scratch when the recorder writes
its first step, then appended to: after every write it is a complete scenario.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from mockoss import __version__
from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.replay import replay_data
from mockoss.upstream.redact import Redactor

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.base import Reply
    from mockoss.scenario.loader import Step
    from mockoss.server.core import MockServer, RecordedRequest

__all__ = ["ROUNDTRIP_KEY", "Recorder"]

logger = logging.getLogger("mockoss")

#: ``Completion._memo`` key: whether ``Completion.from_text(text)`` gives the same tokens.
ROUNDTRIP_KEY = ("mockoss.record", "roundtrip")
#: Request headers whose values are credentials (scrubbed from the recording if they ever appear).
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "openai-api-key")
#: Shortest credential scrubbed: shorter strings (``EMPTY``) would damage ordinary text.
MIN_SECRET_CHARS = 8
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class _Exact(str):
    """A string written double-quoted with escapes: read back byte for byte."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Exact, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style='"'))


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=1 << 30, default_flow_style=False)


def _escape_templates(text: str) -> str:
    """Raw text as a template that renders to itself: each ``{{`` becomes ``{{ "{{" }}``."""
    return text.replace("{{", '{{ "{{" }}')


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
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._next_slot = self._next_write = 0
        self._ready: dict[int, dict[str, Any] | None] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None
        self._started = False
        self._models: set[str] = set()

    # -- the server side (event loop) -----------------------------------------------------------

    def observe(self, server: MockServer, record: RecordedRequest, reply: Reply, step: Step | None) -> None:
        """:meth:`MockServer.respond`'s hook: record the exchange if it reached a step (or an
        upstream's answer); requests rejected before any step are not recorded."""
        if step is None and record.scenario is None:
            return
        try:
            transport = step.transport if step is not None else None
            data = step_data(reply, step)
            if transport is not None:
                data["transport"] = transport.model_dump(exclude_defaults=True, mode="json")
        except Exception:  # a recording problem must never change the reply
            logger.exception("mockoss: could not record request %d", record.index)
            return
        self.finish(self.begin(), server, record, data)

    def begin(self) -> int:
        """Reserve the next position in the recording (steps are written in position order)."""
        with self._lock:
            slot = self._next_slot
            self._next_slot += 1
        return slot

    def skip(self, slot: int) -> None:
        """Release a position that will have no step (the client left before an answer)."""
        self._settle(slot, None)

    def finish(self, slot: int, server: MockServer, record: RecordedRequest, data: Mapping[str, Any]) -> None:
        """Record ``data`` (a step mapping without ``note``) at ``slot`` for ``record``."""
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
        self._settle(slot, item)

    def _settle(self, slot: int, item: dict[str, Any] | None) -> None:
        with self._lock:
            self._ready[slot] = item
            while self._next_write in self._ready:
                ready = self._ready.pop(self._next_write)
                self._next_write += 1
                if ready is not None:
                    if self._executor is None:
                        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mockoss-record")
                    self._last = self._executor.submit(self._write, ready)
            self._settled.notify_all()

    def flush(self, timeout: float | None = 10.0) -> None:
        """Wait until every exchange begun so far (streams included) is on disk. Not from the
        serving event loop: a stream it waits for could never end.

        Raises:
            TimeoutError: not done within ``timeout`` seconds.
        """
        with self._settled:
            begun = self._next_slot
            if not self._settled.wait_for(lambda: self._next_write >= begun, timeout):
                raise TimeoutError(f"mockoss: recording {self.path}: exchanges still open after {timeout} s")
            last = self._last
        if last is not None:
            last.result(timeout)

    def close(self) -> None:
        """Flush and stop the writer thread."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    # -- the writer thread ----------------------------------------------------------------------

    def _write(self, item: dict[str, Any]) -> None:
        try:
            text = self._render(item)
            for secret in item["secrets"]:
                text = text.replace(secret, "[REDACTED]")
            with self.path.open("a" if self._started else "w", encoding="utf-8", newline="") as out:
                out.write(text)
            self._started = True
        except Exception:
            logger.exception("mockoss: could not write request %s to the recording %s", item["index"], self.path)

    def _render(self, item: dict[str, Any]) -> str:
        try:
            body = json.loads(item["raw"])
        except (ValueError, RecursionError):
            body = None
        body = body if isinstance(body, dict) else {}
        model = body.get("model") if isinstance(body.get("model"), str) else None
        last = RequestFacts(item["endpoint"], body, {}, model or "").last("user")
        prompt = last[1] if last is not None else None
        shown, pattern = prompt, None
        if prompt is not None and self._redactor is not None:
            redacted = self._redactor.redact(prompt)
            shown, pattern = redacted.text, redacted.pattern(prompt)
        elif prompt is not None:
            pattern = r"\A" + re.escape(prompt) + r"\Z"
        step: dict[str, Any] = {"note": f"{item['endpoint']} request {item['index']}: " + (shown if shown is not None else "(no user message)")}
        step.update(_exact(item["data"]))
        out = ""
        if not self._started:
            out += self._header(item, model)
        elif model and model not in self._models:
            out += f"# request {item['index']} names model {model}: add it to --served-model-name to replay\n"
        if model:
            self._models.add(model)
        if not self.match:
            return out + _dump([step])
        match: dict[str, Any] = {"endpoint": item["endpoint"]}
        if pattern is not None:
            match["last_user"] = pattern
        return out + _dump([{"match": match, "steps": [step]}])

    def _header(self, item: dict[str, Any], model: str | None) -> str:
        server = item["server"]
        models = [model] if model and item["server"]["upstream"] else list(server["models"])
        command = (
            f"mockoss serve --scenario {self.path} --profile {server['profile']} --seed {server['seed']} "
            f"--served-model-name {' '.join(models)}"
        )
        source = f"upstream {server['upstream']}" if server["upstream"] else f"profile {server['profile']}"
        head: dict[str, Any] = {"version": 1, "description": f"Recorded by mockoss {__version__} from {source}."}
        if server["switches"]:
            head["switches"] = server["switches"]
        if self.match:
            head["when_exhausted"] = "next_rule"
        lines = f"# Replay it byte for byte with: {command}\n" + _dump(head)
        return lines + ("rules:\n" if self.match else "steps:\n")


def _exact(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with the payload strings (raw text, bodies, frames) marked for exact quoting."""
    out = dict(data)
    if "completion" in out:
        out["completion"] = {"raw": _Exact(_escape_templates(out["completion"]["raw"]))}
    if "replay" in out:
        replay = dict(out["replay"])
        for key in ("body", "body_base64"):
            if key in replay:
                replay[key] = _Exact(replay[key])
        if "frames" in replay:
            replay["frames"] = [_Exact(frame) for frame in replay["frames"]]
        out["replay"] = replay
    return out
