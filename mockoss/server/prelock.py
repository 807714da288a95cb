"""What :meth:`mockoss.server.core.MockServer.respond` does for a big request before the server lock.

A big body (:mod:`mockoss.server.offload` sends it to a worker thread with :data:`PROMPT_COUNTER`
set) takes seconds to parse and validate, and then, under the server lock that every other request
waits for, the reply needs work that grows with the body: the request's view (100,000 declared
tools: ~170 ms), the prompt count (the worker process's, now), and a scripted tool call's walk of
the declared tools (58-98 ms). All three depend on the validated request alone, so
:func:`before_lock` does them first, outside the lock, only once the request is known valid (a
request refused by validation, an unknown model, is answered without counting its prompt, as vLLM
checks the model before it renders: ``vllm-project/vllm`` ``serving_chat.py``
``create_chat_completion``, ``_check_model`` first), and hands them on: the count in
:data:`PRECOUNTED_PROMPT_TOKENS`, the declared tools in :data:`mockoss.scenario.tool_check.DECLARED`
and the view as its return value. Any step that fails is left to the lock's side, which does it
again as it would have, and answers its error as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mockoss.scenario.tool_check import DECLARED, declared_functions

__all__ = ["PRECOUNTED_PROMPT_TOKENS", "PROMPT_COUNTER", "before_lock"]

#: A prompt token count computed before the reply is built (see the module docstring; a test
#: may set it); ``None``: counted with the reply.
PRECOUNTED_PROMPT_TOKENS: ContextVar[int | None] = ContextVar("mockoss_prompt_tokens", default=None)
#: Counts a request's prompt tokens elsewhere, ``(endpoint, raw) -> count or None`` (the HTTP
#: layer's worker process for a big body, :mod:`mockoss.server.offload`); ``None``: a small
#: request, nothing done before the lock.
PROMPT_COUNTER: ContextVar[Callable[[str, bytes], int | None] | None] = ContextVar("mockoss_prompt_counter", default=None)


@contextmanager
def before_lock(endpoint: str, raw: bytes, body: Any, checked: Any) -> Iterator[Any]:
    """For a request that passed validation (``checked``: ``(profile, request, model)``; anything
    else, such as ``None`` for a request its ``X-Mockoss-Transport`` header refuses, does nothing)
    while a :data:`PROMPT_COUNTER` is set: its view, count and declared tools made now, the count
    and the tools handed on until the block ends. Yields the view (``None``: built under the lock)."""
    counter = PROMPT_COUNTER.get()
    if counter is None or type(checked) is not tuple:
        yield None
        return
    try:
        view = checked[1].view(checked[2], body)  # as MockServer._reply builds it
    except Exception:  # noqa: BLE001  (built again under the lock, which answers its error as before)
        view = None
    try:
        counted = counter(endpoint, raw) if PRECOUNTED_PROMPT_TOKENS.get() is None else None
    except Exception:  # noqa: BLE001  (the worker failed: counted under the lock, as without one)
        counted = None
    token = PRECOUNTED_PROMPT_TOKENS.set(counted) if counted is not None else None
    declared = None
    if type(body) is dict and body.get("tools"):
        try:
            declared = DECLARED.set((body, declared_functions(body)))
        except Exception:  # noqa: BLE001  (walked again under the lock, which answers its error as before)
            declared = None
    try:
        yield view
    finally:
        if token is not None:
            PRECOUNTED_PROMPT_TOKENS.reset(token)
        if declared is not None:
            DECLARED.reset(declared)

