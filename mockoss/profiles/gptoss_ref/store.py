"""The gpt-oss reference server's response store: ``store: true`` responses, for ``previous_response_id``.

Source: openai/gpt-oss@7b583341fe16729127f6d5b94a7b09ccae97e1a1:gpt_oss/responses_api/api_server.py
(``responses_store``, ``store_callback``, the ``previous_response_id`` block of ``generate``, and
``StreamResponsesEvents.run``, which calls the callback when ``request_body.store``) and
``types.py`` (``store: Optional[bool] = False``). What the server does, and this module with it:

* It keeps ``(request, response)`` for a response it finished (``generate_response`` returned,
  streamed or not, also when ``max_output_tokens`` cut it: that response is ``completed``) whose
  request said ``store: true``. A stream cut by the backend's exception, a final response the
  Harmony parser refuses (the 500, or the stream dropped before ``response.completed``) or any
  earlier error stores nothing.
* A request whose ``previous_response_id`` names a kept response gets as ``input`` the kept
  request's ``input``, then the kept response's ``output`` items, then its own ``input`` (a string
  in either request becomes one user ``message`` with one ``input_text`` part), and the kept
  request's ``instructions`` when its own are ``None`` (absent or ``null``; ``""`` is kept). The
  request kept for the new response is that merged one, so a chain accumulates every turn. An id
  the store does not hold is ignored: the request is answered as sent (the id is still echoed).
  Only ``input`` and ``instructions`` carry over: ``tools``, ``reasoning`` and the rest do not.

What differs (mockoss's choices): each server keeps its own entries in the
:class:`~mockoss.profiles.response_store.KeptResponses` its scenario player owns, which the server
hands over in the request's context (:attr:`RequestContext.kept
<mockoss.profiles.base.RequestContext.kept>`), bounded in bytes: 16 MiB of marshalled entries
(:data:`~mockoss.profiles.response_store.KEPT_BYTES`), the oldest forgotten first (the real
dictionary grows without bound), and emptied by ``MockServer.reset`` with the player. A
continuation naming an id that bound forgot is answered as sent, as one naming an id never kept,
but with a line in the request's server log (:func:`forgotten_note`; the real server says nothing
for an unknown id). An entry is the merged ``input``, the ``output`` items (as the response's JSON
has them) and the ``instructions``; a chain of N turns keeps N entries, each holding the turns
before it. A request answered from an upstream's step (:mod:`mockoss.upstream`) neither reads nor
writes one (its ``kept`` is ``None``). A warm-up before the server lock
(:mod:`mockoss.server.warmup`) reads the entries and keeps nothing (a
:class:`~mockoss.profiles.response_store.KeptReader`): it renders a continuation as the locked call
will, and the request keeps its own response under the lock, with the id it gets there. A reply
whose scripted transport never delivers its end is not kept (:mod:`mockoss.server.stored_replies`,
as the real server's generator stops on a disconnect before its ``store_callback``).
"""

from __future__ import annotations

import marshal
from typing import Any

from mockoss.profiles.response_store import KEPT_BYTES, KeptReader, KeptResponses

__all__ = ["forgotten_note", "keep", "merged"]

Kept = KeptResponses | KeptReader | None


def _as_items(given: Any) -> list[Any]:
    """``_ensure_list``: a string is one user message with one ``input_text`` part; a list is copied."""
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": given}]}]
    return list(given or ())


def merged(entry: bytes, given: Any, instructions: str | None) -> tuple[list[Any], str | None]:
    """The ``input`` and ``instructions`` a request continuing the kept ``entry`` (what :func:`keep`
    stored; looked up with :func:`.prerender.kept_entry`) is answered with, as the server merges
    them (module docstring): the kept input, the kept output, then ``given`` (the request's
    ``input``, a string or a list of item mappings, not changed); ``instructions``, or the kept
    ones when ``None``. Also run in
    the prompt worker process (:mod:`.prerender`), from the entry's bytes as kept."""
    kept_input, kept_output, kept_instructions = marshal.loads(entry)
    items = [*_as_items(kept_input), *kept_output, *_as_items(given)]
    return items, kept_instructions if instructions is None else instructions


def forgotten_note(kept: Kept, previous_id: str) -> tuple[str, ...]:
    """The server-log line (``Reply.log``) for a continuation whose entry was not found:
    one line when ``kept`` once held ``previous_id`` and its byte bound forgot it, else ``()`` (an
    id never kept is ignored silently, as the server ignores it)."""
    if kept is None or not kept.forgot(previous_id):
        return ()
    budget = kept.budget  # a test-id session's store is smaller (1 MiB)
    size = f"{budget // (1024 * 1024)} MiB" if budget % (1024 * 1024) == 0 else f"{budget:,} bytes"
    bound = f"{size} {'per server' if budget == KEPT_BYTES else 'for this store'}, oldest first"
    return (
        f"mockoss: previous_response_id {previous_id!r} was stored, then forgotten by mockoss's bound on kept responses ({bound}): answered without its earlier turns",
    )


def keep(kept: Kept, response_id: str, given: Any, output: list[Any], instructions: str | None) -> None:
    """Keep a finished ``store: true`` response in ``kept`` (the request context's entries; nothing
    when ``None`` or a read-only warm-up's): the request's (merged) ``input`` and ``instructions``
    and the response's ``output`` items (JSON values). Raises ``ValueError`` for a value marshal
    cannot write (never for parsed JSON)."""
    if kept is not None:
        kept.put(response_id, marshal.dumps((given, output, instructions)))
