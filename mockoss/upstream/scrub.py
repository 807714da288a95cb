"""Secret-shaped strings, found and replaced before anything is written to a recording.

Always on (no flag turns it off): every recording is scrubbed, in mock, pass-through and raw mode,
with or without ``--redact`` (which adds personal details, :mod:`mockoss.upstream.redact`).

What counts as a secret: :mod:`mockoss.upstream.detectors` (detect-secrets' plugins, a few
provider shapes of our own, the entropy detectors' tuning). Request fields that carry ids are not
scanned: keys ``id`` and ``*_id`` (``tool_call_id``, ``previous_response_id``, ``call_id``), and
``data:`` URLs (inline images): random ids of 24+ characters reach the entropy limit, and replacing
them would break the conversation a recording replays.

Where the scan runs: the whole request (every string value but the id fields above) and the
prompt shown in ``note``/``match`` get every detector; each value found is then replaced *wherever
it appears* in the written step, replay bytes and completions included (an upstream that echoes
``instructions`` or ``metadata`` echoes the value found in the request). The upstream's own output
gets the provider patterns only (not entropy: its ids are random by design; not the
assignment-context detectors: they cost ~1 ms per KB). Known gap: a secret
a model streams token by token in pass-through mode is split across delta frames and no frame
holds it whole; it is not replaced (nor does the file hold it as one string). A replay body
that is not UTF-8 (stored as ``body_base64``) is not scanned.

Cost (issue 9 review, eighth session, finding 1): the values found are located by one pass over
the text whatever their number (:func:`mockoss.upstream.occurrences.occurrences`), not one search of the whole text per value
(a 2 MB lockfile-shaped prompt, 13,000 hashes: ~10 s of finds alone), and so are the known values
in stream frames and in the rendered step. A text of :data:`WORKER_CHARS` or more is scanned in
a helper process (:mod:`mockoss.upstream.scan_worker`): detect-secrets' regexes are single calls
of up to ~0.5 s each over megabytes, which held the GIL of the whole server. The scan itself
stays linear but slow (~2 s per MB for detect-secrets on a lockfile), so a request body of
:data:`PRESCAN_BYTES` or more is scanned before its step joins the recorder's queue
(:func:`scan_first`): the writer renders steps one after another, and the steps behind it wait
only for its render (searching the known values in its prompt and its rendered text: ~0.5-1 s
for 2 MB and 13,000-48,000 values on a busy 2-core machine; a known limit).

Placeholders are ``[REDACTED:<kind>:<n>]`` (``n`` counts distinct values in one recording, in the
order written): the same value gets the same placeholder throughout a recording, and the same
traffic gives the same recording. They hold no ``"``, ``\\`` or newline, so JSON bodies and SSE
frames stay well-formed.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, InvalidStateError
from typing import Any

from mockoss.harmony.lru import BytesLRU
from mockoss.upstream.detectors import find_spans, non_overlapping
from mockoss.upstream.occurrences import occurrences as _occurrences
from mockoss.upstream.scan_worker import ScanWorker, serve
from mockoss.workers import DaemonPool

__all__ = ["Scrubber", "find_secrets", "scan_first"]

#: Request keys whose values are ids, not secrets (see the module docstring).
_ID_KEY = re.compile(r"(?:^|_)id$")


#: Byte budget of the scans kept by text (:func:`find_secrets`). An ``lru_cache(4096)`` keyed by
#: whole request and reply texts held up to 4,096 bodies of any size (issue 9 review: caches of
#: request data bounded in bytes); ``MockServer.reset`` empties it.
SCAN_CACHE_BYTES = 16 * 1024 * 1024
_scans: BytesLRU[tuple[tuple[int, int, str], ...]] = BytesLRU(SCAN_CACHE_BYTES)


def _cached(text: str, entropy: bool) -> tuple[tuple[int, int, str], ...]:
    key = (text, entropy)
    found = _scans.get(key)
    if found is None:
        found = tuple(_scan(text, entropy))
        _scans.put(key, found, sys.getsizeof(text) + 128 * len(found))
    return found


def find_secrets(text: str, *, entropy: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret-shaped value in ``text``, in order, none overlapping
    (the longer of two overlapping finds wins).

    Args:
        text: any text (multi-line; PEM blocks are found whole).
        entropy: also run the entropy and assignment-context detectors (off for an upstream's own
            output: its ids are random by design, and its streams are long).

    Results are cached per text (a conversation resends its earlier messages every turn).
    """
    return list(_cached(text, entropy))


#: Texts of at least this many characters are scanned in the scan worker process
#: (:class:`~mockoss.upstream.scan_worker.ScanWorker`), shorter ones in this one. detect-secrets' regexes take ~1 ms per KB
#: between them, each one call over the whole text that holds the GIL: over 2 MB, single calls
#: of 100-600 ms kept every other thread of the server (the event loop included) waiting (issue
#: 9 review, eighth session, finding 1). Below this size no call takes more than a few ms. A
#: limit chosen here (no source settles it).
WORKER_CHARS = 64 * 1024


def _scan(text: str, entropy: bool) -> list[tuple[int, int, str]]:
    """:func:`~mockoss.upstream.detectors.find_spans`, in the scan worker process for a text of
    :data:`WORKER_CHARS` or more (in this process if the worker cannot be used)."""
    if len(text) >= WORKER_CHARS:
        found = _helper().ask("find", text, entropy)
        if found is not None:
            return found
    return find_spans(text, entropy)


_WORKER_COMMAND = "from mockoss.upstream.scrub import serve_scans; serve_scans()"
#: The recorder writer's helper process; :func:`scan_first`'s threads have their own, so that a
#: body's scan of several seconds never holds up the render of a step already scanned.
_worker, _prescan_worker = ScanWorker(_WORKER_COMMAND), ScanWorker(_WORKER_COMMAND)
atexit.register(_worker.stop)
atexit.register(_prescan_worker.stop)
_local = threading.local()


def _helper() -> ScanWorker:
    """The helper process of this thread (:data:`_worker` unless :func:`scan_first` set another)."""
    return getattr(_local, "worker", _worker)


_OPERATIONS = {"find": find_spans, "occurrences": _occurrences}


def serve_scans() -> None:
    """The scan worker process's loop (:func:`mockoss.upstream.scan_worker.serve`):
    :func:`~mockoss.upstream.detectors.find_spans` and :func:`_occurrences` until its stdin closes."""
    serve(_OPERATIONS)


#: A request body of at least this many bytes is scanned before its step is queued (:func:`scan_first`).
PRESCAN_BYTES = WORKER_CHARS

#: The threads :func:`scan_first` scans big bodies on: at most 2 (they share one helper process,
#: :data:`_prescan_worker`, which answers one scan at a time, so more threads would only hold more
#: bodies parsed at once); a thread per body let a burst of big bodies start a thread each (issue 9,
#: task O). Bodies under :data:`PRESCAN_BYTES` never wait here.
_SCANS = DaemonPool(2, "mockoss-record-scan")


def scan_first(raw: bytes | str, submit: Callable[[], Future[None]]) -> Future[None]:
    """A ticket done when ``submit()``'s is, ``submit`` called once every string of the request
    body ``raw`` is scanned (:func:`find_secrets`, kept in the scan cache for the step's
    render), on one of at most two threads (:data:`_SCANS`; more bodies wait in order);
    ``submit()`` itself, at once, for a body under :data:`PRESCAN_BYTES`.

    The recorder's writer renders steps one after another, and a step queued behind one whose
    prompt is megabytes waited for that prompt's scan (seconds: issue 9 review, eighth session,
    finding 1). The big step now enters the queue scanned, and exchanges that finish meanwhile
    are written, and answered, first. Concurrent exchanges have no order of their own; one
    client's exchanges one after another keep theirs (each reply waits for its step). A text
    whose scan does not fit the cache (:data:`SCAN_CACHE_BYTES`) is scanned again by the writer.
    """
    if len(raw) < PRESCAN_BYTES:
        return submit()
    ticket: Future[None] = Future()

    def done(_: Future[None]) -> None:
        with contextlib.suppress(InvalidStateError):  # cancelled by its waiter: fine
            ticket.set_result(None)

    def scan_then_submit() -> None:
        _worker.warm()  # the writer's helper, for this step's render: started while the body is scanned
        _local.worker = _prescan_worker
        try:
            body = json.loads(raw)
            for text in _strings(body):
                find_secrets(text)
        except Exception:  # noqa: BLE001, S110  # not JSON, or a scan failed: the writer's render reports it
            pass
        submit().add_done_callback(done)

    _SCANS.submit(scan_then_submit)
    return ticket


def _strings(data: Any, key: str = "") -> Iterator[str]:
    """Every string value in a JSON document, except id fields and ``data:`` URLs."""
    if isinstance(data, str):
        if not _ID_KEY.search(key) and not data.startswith("data:"):
            yield data
    elif isinstance(data, dict):
        for name, value in data.items():
            yield from _strings(value, str(name))
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value, key)


class Scrubber:
    """Replaces secrets with stable placeholders for one recording (thread-safe).

    The placeholder of a value is fixed the first time it is seen: ``[REDACTED:<kind>:<n>]``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._placeholders: dict[str, str] = {}

    def placeholder(self, value: str, kind: str) -> str:
        """The stand-in for ``value`` (same value, same stand-in)."""
        with self._lock:
            found = self._placeholders.get(value)
            if found is None:
                found = self._placeholders[value] = f"[REDACTED:{kind}:{len(self._placeholders) + 1}]"
            return found

    def spans(self, text: str, known: dict[str, str] | None = None) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` spans of :func:`find_secrets` in ``text`` plus every
        occurrence of a ``known`` value (value → kind), none overlapping."""
        return non_overlapping(find_secrets(text) + _known_spans(text, known or {}))

    def request_secrets(self, body: Any) -> dict[str, str]:
        """value → kind of every secret in a request body (every detector, id fields skipped)."""
        out: dict[str, str] = {}
        for text in _strings(body):
            for start, end, kind in find_secrets(text):
                out.setdefault(text[start:end], kind)
        return out

    def replace_all(self, texts: list[str], known: dict[str, str]) -> list[str]:
        """:meth:`replace` on each of ``texts`` (stream frames) with one scan of them all: each
        secret the provider patterns find in any of them is replaced wherever it appears.

        The frames are searched as one text too (an occurrence across two frames is no frame's,
        and stays): one pass for any number of frames and values, where searching each frame
        for each value cost frames x values finds (4,000 frames and 2,000 known values: ~3 s;
        issue 9 review, eighth session, finding 1)."""
        joined = "\n".join(texts)
        found = dict(known)
        for start, end, kind in find_secrets(joined, entropy=False):
            found.setdefault(joined[start:end], kind)
        starts, position = [], 0
        for text in texts:
            starts.append(position)
            position += len(text) + 1
        per_text: list[list[tuple[int, int, str]]] = [[] for _ in texts]
        for start, end, kind in _known_spans(joined, found):
            index = bisect.bisect_right(starts, start) - 1
            first = starts[index]
            if end - first <= len(texts[index]):
                per_text[index].append((start - first, end - first, kind))
        return [self._substitute(text, spans) for text, spans in zip(texts, per_text, strict=True)]

    def replace_values(self, text: str, known: Mapping[str, str]) -> str:
        """``text`` with every ``known`` value (value → kind) replaced by its placeholder, in one
        pass (where two occurrences overlap, the one starting first stays; of two starting
        together, the longer). Every value's placeholder is fixed first, in ``known``'s order,
        whether it occurs or not: the numbering a value-by-value :meth:`str.replace` gave.

        The recorder's last pass over a rendered step (:meth:`mockoss.upstream.Recorder`): one
        :meth:`str.replace` per value cost values x ``len(text)`` (issue 9 review, eighth
        session, finding 1)."""
        for value, kind in known.items():
            self.placeholder(value, kind)
        return self._substitute(text, _known_spans(text, known))

    def replace(self, text: str, known: dict[str, str], *, entropy: bool = False) -> str:
        """``text`` with every ``known`` value and every provider-pattern secret replaced
        (``entropy``: the entropy and assignment-context detectors too)."""
        return self._substitute(text, find_secrets(text, entropy=entropy) + _known_spans(text, known))

    def _substitute(self, text: str, spans: list[tuple[int, int, str]]) -> str:
        if not spans:
            return text
        out, position = [], 0
        for start, end, kind in non_overlapping(spans):
            out += [text[position:start], self.placeholder(text[start:end], kind)]
            position = end
        out.append(text[position:])
        return "".join(out)


def _known_spans(text: str, known: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """Every occurrence of every ``known`` value (value → kind) in ``text`` (:func:`_occurrences`;
    in the scan worker process for a text of :data:`WORKER_CHARS` or more)."""
    if not known:
        return []
    if len(text) >= WORKER_CHARS:
        found = _helper().ask("occurrences", text, dict(known))
        if found is not None:
            return found
    return _occurrences(text, known)
