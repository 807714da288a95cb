"""The gpt-oss reference prompt rendered before the server lock, off the event loop.

:meth:`GptossReferenceProfile.responses <mockoss.profiles.gptoss_ref.GptossReferenceProfile.responses>`
renders the whole prompt for ``usage.input_tokens`` (:func:`~mockoss.profiles.gptoss_ref.prompt.prompt_tokens`,
as the server's ``generate`` renders it once: openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py).
Under the server lock, on the event loop, that held every other client: one 70,000-character word
2.6 s (openai-harmony's BPE is quadratic in a word's length and holds the GIL), 1,000 one-letter
items 235 ms, and a 111-byte continuation of a kept chain of 2.5M tokens 1.1 s (issue 9; session
15's breaker, F2 and F3). The other profiles count a heavy prompt before the lock, in the prompt
worker process (:mod:`mockoss.server.prelock`, :mod:`mockoss.server.offload`); this module does
the same for this profile's render:

* :func:`off_loop` (the HTTP layer, on the event loop, through
  :func:`mockoss.server.prelock.wanted`): whether a request the generic tests leave on the loop
  is heavy for this profile: many items (:data:`ITEMS` JSON objects, counted as ``{`` in the
  body and in the kept entry it continues: ~0.2 ms an item here), or a continuation whose kept
  entry is big (:data:`ENTRY_BYTES`) or may hold long pre-tokenizer pieces. Then it is answered on
  a worker thread.
* :func:`prepare` (that thread, before the lock, :func:`mockoss.server.prelock.before_lock`):
  merges the continuation from the server's kept responses, read only, and renders the prompt:
  in the worker process when the request is heavy (:func:`worker_payload`, answered there by
  :func:`worker_answer`; the same function, so the same tokens), else here. The result
  (:class:`Prerendered`) is handed to the reply in :data:`PRERENDERED`.
* Under the lock, :meth:`~mockoss.profiles.gptoss_ref.GptossReferenceProfile.responses` takes
  the handed tokens (:func:`handed`) when they were rendered from the same body object, the same
  kept entry (identity: a response kept again under the same id, or forgotten, is another object
  or none) and the same date and Harmony library; else it renders as before. A render that
  raised :class:`~mockoss.profiles.gptoss_ref.prompt.PromptError` (a 500) or panicked (a 400) is
  handed on as that exception, raised where the render would have raised it.
"""

from __future__ import annotations

import marshal
import struct
from array import array
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple

from mockoss.profiles.gptoss_ref.prompt import PromptError, prompt_tokens
from mockoss.profiles.gptoss_ref.store import merged

__all__ = [
    "ENTRY_BYTES",
    "ITEMS",
    "PRERENDERED",
    "Prerendered",
    "handed",
    "kept_entry",
    "off_loop",
    "prepare",
    "worker_answer",
    "worker_payload",
]

#: A body (with the kept entry it continues) holding at least this many JSON objects is answered
#: off the loop: each input item is a message or two for openai-harmony (~0.2 ms each with its
#: pydantic models: 1,000 one-letter items held another client 235 ms), so 64 are ~13 ms.
ITEMS = 64
#: A continuation whose kept entry (marshalled) is at least this many bytes is answered off the
#: loop and rendered in the worker process: ~0.2 us a byte of words (2.5M tokens, 5.7 MB: 1.1 s).
ENTRY_BYTES = 32 * 1024
#: The worker answer's first byte for a render that raised :class:`PromptError`; its text follows.
PROMPT_FAILED = b"E"
_HEAD = struct.Struct(">I")


class Prerendered(NamedTuple):
    """A prompt rendered before the lock: from ``body`` (the parsed request body, compared by
    identity), continuing ``entry`` (the kept entry read, compared by identity; ``None``: none),
    on ``date`` with ``library``; ``tokens``: the prompt's token ids (a list, or an ``array("I")``
    from the worker process), or the exception the render raised there."""

    body: Any
    entry: bytes | None
    date: str
    library: str
    tokens: Sequence[int] | BaseException


#: The prompt :func:`prepare` rendered for the request being answered (its context), else ``None``.
PRERENDERED: ContextVar[Prerendered | None] = ContextVar("mockoss_gptoss_prerendered", default=None)


def kept_entry(kept: Any, previous: Any) -> bytes | None:
    """The entry ``kept`` (the request context's kept responses or a read-only view; ``None``:
    none) holds for ``previous`` (a request's ``previous_response_id``), else ``None``."""
    return kept.get(previous) if kept is not None and type(previous) is str and previous else None


def off_loop(
    endpoint: str, raw: bytes, kept: Any, long_pieces: Callable[[bytes], bool], body: Callable[[bytes], Any]
) -> bool:
    """Whether ``raw``, a request for ``endpoint``, is heavy to render for this profile (module
    docstring): at least :data:`ITEMS` ``{`` in the body and its kept entry, or a kept entry of
    :data:`ENTRY_BYTES` or more, or one ``long_pieces`` (:func:`mockoss.server.longpieces.may_hold_long_pieces`)
    finds long pieces in. ``body`` parses ``raw`` (read only: the answer's parse takes it), called
    only for a body naming ``previous_response_id``. One ``bytes.count`` and ``bytes.find`` for
    any other body (~1 us for 8 KB)."""
    if endpoint != "responses":
        return False
    objects = raw.count(b"{")
    if objects >= ITEMS:
        return True
    if raw.find(b"previous_response_id") < 0:
        return False
    try:
        parsed = body(raw)
    except (ValueError, RecursionError):
        return False
    entry = kept_entry(kept, parsed.get("previous_response_id")) if type(parsed) is dict else None
    return entry is not None and (
        len(entry) >= ENTRY_BYTES or objects + entry.count(b"{") >= ITEMS or long_pieces(entry)
    )


def prepare(
    body: Any,
    checked: Any,
    kept: Any,
    date: str,
    library: str,
    raw: bytes,
    elsewhere: Callable[[bytes], bytes | None] | None,
) -> Prerendered | None:
    """The prompt of a valid request (``body``, its pydantic model ``checked``), continued from
    ``kept`` (read only), rendered with ``elsewhere`` (the worker process: ``payload -> answer``,
    :func:`worker_payload`, :func:`worker_answer`; it may raise the worker's tokenizer panic) or,
    when ``None``, here. ``None`` when the worker failed: the reply renders it under the lock."""
    entry = kept_entry(kept, checked.previous_response_id)
    try:
        if elsewhere is None:
            tokens: Sequence[int] = _render(body, entry, checked.instructions, date, library)
        else:
            answer = elsewhere(worker_payload(date, library, entry, checked.instructions, raw))
            if answer is None or answer[:1] not in (b"=", PROMPT_FAILED):
                return None
            if answer[:1] == PROMPT_FAILED:
                raise PromptError(answer[1:].decode("utf-8", "surrogatepass"))
            tokens = array("I")
            tokens.frombytes(memoryview(answer)[1:])  # the same machine's byte order both ends
    except PromptError as exc:
        return Prerendered(body, entry, date, library, exc)
    except Exception:  # noqa: BLE001  (rendered again under the lock, which raises it as before)
        return None
    except BaseException as exc:  # openai-harmony's panic (pyo3's PanicException), here or in the worker: handed on
        if type(exc).__name__ != "PanicException":
            raise
        return Prerendered(body, entry, date, library, exc)
    return Prerendered(body, entry, date, library, tokens)


def _render(body: Any, entry: bytes | None, instructions: str | None, date: str, library: str) -> list[int]:
    """The prompt of request ``body`` continuing the kept ``entry`` (``None``: none), as the reply
    renders it under the lock; here on a worker thread, or in the worker process (:func:`worker_answer`).

    Raises:
        PromptError: where the server raises (an HTTP 500)."""
    given = dict(body)
    if entry is not None:
        given["input"], given["instructions"] = merged(entry, given["input"], instructions)
    return prompt_tokens(given, date, library)


def handed(body: Any, entry: bytes | None, date: str, library: str) -> Sequence[int] | None:
    """The tokens :func:`prepare` rendered for exactly this (``body``, ``entry``: identities;
    ``date``, ``library``), else ``None`` (render them now).

    Raises:
        PromptError, PanicException: what that render raised."""
    found = PRERENDERED.get()
    if (
        found is None
        or found.body is not body
        or found.entry is not entry
        or found.date != date
        or found.library != library
    ):
        return None
    if isinstance(found.tokens, BaseException):
        raise found.tokens
    return found.tokens


def worker_payload(date: str, library: str, entry: bytes | None, instructions: str | None, raw: bytes) -> bytes:
    """The prompt worker's ``gptoss-reference`` request (:mod:`mockoss.server.prompt_worker`):
    the marshalled ``(date, library, entry, instructions)`` with its length in front,
    then the raw body (the kept entry travels as it is kept: nothing is serialised again here)."""
    head = marshal.dumps((date, library, entry, instructions))
    return _HEAD.pack(len(head)) + head + raw


def worker_answer(payload: bytes, parse: Callable[[bytes], Any]) -> bytes:
    """In the worker process: the answer to :func:`worker_payload`'s ``payload`` (``parse``: the
    server's JSON parse, :func:`mockoss.jsonbody.parse_json`): ``=`` then the prompt's ids as
    unsigned 32-bit integers in this machine's order, or :data:`PROMPT_FAILED` then the
    :class:`PromptError`'s text. Other exceptions (and a tokenizer panic) propagate to the
    worker, which answers them as it answers a failed render."""
    (size,) = _HEAD.unpack_from(payload)
    date, library, entry, instructions = marshal.loads(payload[_HEAD.size : _HEAD.size + size])
    try:
        tokens = _render(parse(payload[_HEAD.size + size :]), entry, instructions, date, library)
    except PromptError as exc:
        return PROMPT_FAILED + str(exc).encode("utf-8", "surrogatepass")
    return b"=" + array("I", tokens).tobytes()
