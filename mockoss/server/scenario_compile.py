"""Compiling a scenario off the event loop: an upload's (``POST /mockoss/scenario``) and a
``--scenario-dir`` file's a request names (``X-Mockoss-Scenario: NAME``), by the same loader.

Both run on a worker thread (an upload on the control routes' pool,
:data:`mockoss.server.control_routes.UPLOAD_COMPILES`; a request naming a file on the off-loop
gate's, :class:`mockoss.server.offload.Gate`), where the interpreter hands the event loop the GIL
every few milliseconds, with :func:`long_texts_elsewhere` set: openai-harmony's encode holds the
GIL for a whole call (a 169 KB text: 57 ms), so a long scenario text is tokenized in the prompt
worker process instead (:func:`mockoss.server.prompt_client.encode_in_worker`; the same ids).

On the event loop a 249 KB upload held every other client 222 ms (issue 9 review, finding 7); a
548 KB ``--scenario-dir`` file of 5,001 rules held it 3.7 s on its first request, and again after
each edit, compiled under the server lock (the fifteenth session's breaker, finding F4).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mockoss.collector import COLLECTOR
from mockoss.scenario.loader import Scenario, load_named, scenario_from_bytes

__all__ = ["ENCODE_ELSEWHERE_CHARS", "compile_upload", "load_named_elsewhere", "long_texts_elsewhere", "one_at_a_time"]

#: Characters of a scenario text from which it is tokenized in the worker process
#: (openai-harmony encodes ~3 KB of words per ms holding the GIL: 16 KiB is ~5 ms).
ENCODE_ELSEWHERE_CHARS = 16 * 1024


def _encode_long_elsewhere(text: str, special: bool) -> list[int] | None:
    """:func:`mockoss.server.prompt_client.encode_in_worker` of a text of at least
    :data:`ENCODE_ELSEWHERE_CHARS` characters; ``None`` (encode here) for a shorter one."""
    if len(text) < ENCODE_ELSEWHERE_CHARS:
        return None
    from mockoss.server import prompt_client

    return prompt_client.encode_in_worker(text, special)


@contextmanager
def long_texts_elsewhere() -> Iterator[None]:
    """While open (on this thread's context), scenario texts of :data:`ENCODE_ELSEWHERE_CHARS`
    characters or more are tokenized in the prompt worker process
    (:data:`mockoss.harmony.encoding.ENCODE_ELSEWHERE`), and the cyclic garbage collector is
    paused (:data:`mockoss.collector.COLLECTOR`, as for a heavy request answered off the loop):
    a compile's YAML nodes, parsed data and models are alive together, and a full collection
    over them ran in the compiling thread holding the GIL, 171 and 473 ms for a 548 KB file of
    5,001 rules (``mockoss serve``'s thresholds; what they leave is freed by reference counting,
    the rest by the next collection). Blocking: open it on a worker thread."""
    from mockoss.harmony.encoding import ENCODE_ELSEWHERE

    token = ENCODE_ELSEWHERE.set(_encode_long_elsewhere)
    COLLECTOR.pause()
    try:
        yield
    finally:
        COLLECTOR.resume()
        ENCODE_ELSEWHERE.reset(token)


def compile_upload(raw: bytes, name: str) -> Scenario:
    """A scenario from YAML or JSON bytes (an upload), validated and compiled by the same loader
    as files (:func:`mockoss.scenario.loader.scenario_from_bytes`, kept by content as they are:
    the same upload by many sessions is one compiled scenario); blocking (on a worker thread).

    Raises:
        ScenarioError: errors name the upload as ``upload:NAME.yaml``, the line and the field.
    """
    with long_texts_elsewhere():
        return scenario_from_bytes(raw, name=name, origin=f"upload:{name}.yaml")


def load_named_elsewhere(name: str, scenario_dirs: Sequence[str | Path], max_bytes: int | None) -> Scenario:
    """:func:`mockoss.scenario.loader.load_named` (a ``--scenario-dir`` file or a shipped
    scenario, cached by content: the same object for the same bytes) with
    :func:`long_texts_elsewhere`; blocking (on a worker thread). ``max_bytes``: the largest
    directory file read (``--max-scenario-bytes``; ``None``: the loader's own limit).

    Raises:
        ScenarioError: as :func:`~mockoss.scenario.loader.load_named` (a file over ``max_bytes``:
            its path, size and the limit).
    """
    with long_texts_elsewhere():
        return load_named(name, scenario_dirs, max_bytes=max_bytes)


_held: dict[Hashable, tuple[threading.Lock, int]] = {}
_guard = threading.Lock()


@contextmanager
def one_at_a_time(key: Hashable) -> Iterator[None]:
    """Held by one thread at a time per ``key`` (blocking the others, on their worker threads):
    a burst of first requests naming the same file (the caller's key: the directories and the
    name, so that test-id sessions share it) compiles it once, the others then find it loaded or
    cached, instead of each compiling it beside the others. Locks are dropped when unused."""
    with _guard:
        lock, users = _held.get(key, (None, 0))
        lock = lock or threading.Lock()
        _held[key] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with _guard:
            lock, users = _held[key]
            if users == 1:
                del _held[key]
            else:
                _held[key] = (lock, users - 1)
