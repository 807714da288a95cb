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
:class:`~mockoss.profiles.response_store.KeptResponses` its scenario player owns (handed over in
:data:`~mockoss.profiles.response_store.KEPT`), bounded in bytes: 16 MiB of marshalled entries
(:data:`~mockoss.profiles.response_store.KEPT_BYTES`), the oldest forgotten first (the real
dictionary grows without bound), and emptied by ``MockServer.reset`` with the player. An entry is
the merged ``input``, the ``output`` items (as the response's JSON has them) and the
``instructions``; a chain of N turns keeps N entries, each holding the turns before it. A request
answered from an upstream's step (:mod:`mockoss.upstream`) neither reads nor writes one. A
warm-up before the server lock (:mod:`mockoss.server.warmup`, long completions over HTTP)
surfaces a request before it is played: where its context still holds the server's entries from
an earlier request, it keeps what the request would keep under the id it predicted (the request
itself then writes the same entry again, unless another request took that index).
"""

from __future__ import annotations

import marshal
from typing import Any

from mockoss.profiles.response_store import KEPT

__all__ = ["continued", "keep"]


def _as_items(given: Any) -> list[Any]:
    """``_ensure_list``: a string is one user message with one ``input_text`` part; a list is copied."""
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": given}]}]
    return list(given or ())


def continued(previous_id: str, given: Any, instructions: str | None) -> tuple[list[Any], str | None] | None:
    """The ``input`` and ``instructions`` a request continuing response ``previous_id`` is answered
    with: ``(kept input + kept output + given, instructions or the kept ones)``, as the server merges
    them (module docstring); ``None`` when the server keeps no such id. ``given`` is the request's
    ``input`` (a string or a list of item mappings, not changed). Call it only for a request that
    names a ``previous_response_id`` (:data:`~mockoss.profiles.response_store.KEPT` is set then)."""
    kept = KEPT.get()
    entry = None if kept is None else kept.get(previous_id)
    if entry is None:
        return None
    kept_input, kept_output, kept_instructions = marshal.loads(entry)
    merged = [*_as_items(kept_input), *kept_output, *_as_items(given)]
    return merged, kept_instructions if instructions is None else instructions


def keep(response_id: str, given: Any, output: list[Any], instructions: str | None) -> None:
    """Keep a finished ``store: true`` response in the server's entries: the request's (merged)
    ``input`` and ``instructions`` and the response's ``output`` items (JSON values). Call it only
    for a request whose ``store`` is true (:data:`~mockoss.profiles.response_store.KEPT` is set
    then; nothing is kept when it is ``None``). Raises ``ValueError`` for a value marshal cannot
    write (never for parsed JSON)."""
    kept = KEPT.get()
    if kept is not None:
        kept.put(response_id, marshal.dumps((given, output, instructions)))
