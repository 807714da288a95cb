"""What :meth:`mockoss.server.core.MockServer.respond` does for a big request before the server lock.

A big body (:mod:`mockoss.server.offload` sends it to a worker thread with :data:`PROMPT_COUNTER`
set) takes seconds to parse and validate, and then, under the server lock that every other request
waits for, the reply needs work that grows with the body: the request's view (100,000 declared
tools: ~170 ms), the prompt count (the worker process's, now), and a scripted tool call's walk of
the declared tools (58-98 ms). All three depend on the validated request alone, so
:func:`before_lock` does them first, outside the lock, only once the request is known valid (a
request refused by validation, an unknown model, is answered without counting its prompt, as vLLM
checks the model before it renders: ``vllm-project/vllm`` ``serving_chat.py``
``create_chat_completion``, ``_check_model`` first; the profile's own refusal,
``request_refusal``, runs later, under the lock, so a big body it refuses, an Ollama Go-decoding
400 or an SGLang template 400, is counted first: wasted work, the same reply), and hands them on: the count in
:data:`PRECOUNTED_PROMPT_TOKENS`, the declared tools in :data:`mockoss.scenario.tool_check.DECLARED`
and the view as its return value. Any step that fails is left to the lock's side, which does it
again as it would have, and answers its error as before.

A reply that carries the prompt's token ids needs them rendered, not only counted: Ollama's
``/api/generate`` answers ``context``, the prompt's tokens then the generated text's
(``ollama/ollama@fb307609:server/routes.go``, ``GenerateHandler``: on the last response, unless
``raw``, ``r.Tokenize(prompt + generated)`` becomes ``res.Context``). mockoss rendered them under
the lock, in process: one 50,000-character word, ~0.8-1.4 s that every other client waited
(openai-harmony's BPE is quadratic in a word's length and holds the GIL;
``benchmarks/bench_isolation.py`` case ``ollamaword``). So while a :data:`PROMPT_RENDERER` is set,
:func:`before_lock` renders them too (in the worker process), hands them to the profile in
:data:`mockoss.profiles.ollama.native.PRERENDERED_PROMPT` as the text the reply holds (``id,id,…``,
joined in the worker: a 10 MB prompt's 2,000,000 ids took ~0.2 s to join here), and counts the
prompt as their number (``Endpoint.render_prompt``'s length is the count by definition,
:func:`mockoss.endpoints.prompt_tokens`), which saves the worker a second render. If the worker fails (or rendering raised there),
the count is asked for as before and the profile renders under the lock, as it did, and
raises what it raised; if the tokenizer panicked there, the count is asked for as before and the
profile raises that panic (:class:`mockoss.server.prompt_worker.PanicException`) instead of
rendering again.

A profile whose reply renders its own whole prompt (``gptoss-reference``: ``usage.input_tokens``
is the reference server's prompt, a kept chain merged in) has two optional hooks:
``prompt_off_loop``, asked by :func:`wanted` on the event loop (the HTTP layer sends a request it
finds heavy to a worker thread: many items, a continuation of a big kept chain; the generic
tests leave those on the loop), and ``prompt_before_lock``, called by :func:`before_lock` on that
thread (also without a :data:`PROMPT_COUNTER`), which renders it there, in the worker process
when heavy (:func:`mockoss.server.prompt_client.ask_in_worker`), reading the server's kept
responses (``kept``) without writing them, and hands it to the reply in the profile's own
variable (:mod:`mockoss.profiles.gptoss_ref.prerender`: 70,000 characters of one word held another
client 2.6 s, a 111-byte continuation of a 2.5M-token chain 1.1 s; session 15's breaker, F2, F3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony.encoding import ENCODE_ELSEWHERE
from mockoss.jsonbody import parse_json_and_hand_on
from mockoss.scenario.tool_check import DECLARED, declared_functions
from mockoss.server.longpieces import may_hold_long_pieces
from mockoss.server.prompt_client import ask_in_worker, encode_in_worker

__all__ = ["PRECOUNTED_PROMPT_TOKENS", "PROMPT_COUNTER", "PROMPT_RENDERER", "before_lock", "wanted"]

#: A prompt token count computed before the reply is built (see the module docstring; a test
#: may set it); ``None``: counted with the reply.
PRECOUNTED_PROMPT_TOKENS: ContextVar[int | None] = ContextVar("mockoss_prompt_tokens", default=None)
#: Counts a request's prompt tokens elsewhere, ``(endpoint, raw) -> count or None`` (the HTTP
#: layer's worker process for a big body, :mod:`mockoss.server.offload`); ``None``: a small
#: request, nothing done before the lock.
PROMPT_COUNTER: ContextVar[Callable[[str, bytes], int | None] | None] = ContextVar("mockoss_prompt_counter", default=None)
#: Renders a request's prompt token ids elsewhere, ``(endpoint, raw) -> "id,id,…" or None`` (the
#: worker process, :func:`mockoss.server.offload.render_in_worker`), for a reply that carries them
#: (see the module docstring); ``None``: rendered with the reply, if it needs them.
PROMPT_RENDERER: ContextVar[Callable[[str, bytes], str | None] | None] = ContextVar("mockoss_prompt_renderer", default=None)


def wanted(server: Any, endpoint: str, raw: bytes) -> bool:
    """Whether the HTTP layer answers ``raw`` on a worker thread because its profile's own prompt
    render is heavy (the profile's optional ``prompt_off_loop(endpoint, raw, kept, long_pieces,
    parse)``: ``gptoss-reference``'s many items or big kept chain, :mod:`mockoss.profiles.gptoss_ref.prerender`;
    see the module docstring). On the event loop, for every request the generic tests
    (:func:`mockoss.server.offload.is_heavy`) leave there: an attribute look-up for a profile
    without the hook."""
    hook = getattr(server._base_profile, "prompt_off_loop", None)
    return hook is not None and bool(hook(endpoint, raw, server.kept, may_hold_long_pieces, parse_json_and_hand_on))


@contextmanager
def before_lock(endpoint: str, raw: bytes, body: Any, checked: Any, kept: Any = None) -> Iterator[Any]:
    """For a request that passed validation (``checked``: ``(profile, request, model)``; anything
    else, such as ``None`` for a request its ``X-Mockoss-Transport`` header refuses, does nothing):
    the profile's own prompt rendered now, if it has that hook (:func:`_own_prompt`; ``kept``: the
    server's kept responses, read only), and while a :data:`PROMPT_COUNTER` is set its view, count
    and declared tools made now; all handed on until the block ends. Yields the view (``None``:
    built under the lock)."""
    if type(checked) is not tuple:
        yield None
        return
    own = _own_prompt(endpoint, raw, body, checked, kept)
    token = own[0].set(own[1]) if own is not None else None
    try:
        with _counted(endpoint, raw, body, checked) as view:
            yield view
    finally:
        if token is not None:
            own[0].reset(token)  # type: ignore[index]


def _own_prompt(endpoint: str, raw: bytes, body: Any, checked: tuple[Any, ...], kept: Any) -> tuple[ContextVar[Any], Any] | None:
    """The profile's ``prompt_before_lock(endpoint, body, raw, kept, elsewhere)`` (``gptoss-reference``:
    its whole prompt, rendered for ``usage``, :mod:`mockoss.profiles.gptoss_ref.prerender`): the
    profile's variable and what to set it to, else ``None`` (no hook, or it failed: the reply
    renders under the lock, as without it). ``elsewhere`` is the prompt worker process
    (:func:`mockoss.server.prompt_client.ask_in_worker`) when the request is heavy: a body the
    HTTP layer counts in the worker (:data:`PROMPT_COUNTER` set), one that may hold long pieces,
    or one the profile's ``prompt_off_loop`` finds heavy; else ``None`` (rendered on this thread)."""
    hook = getattr(checked[0], "prompt_before_lock", None)
    if hook is None:
        return None
    try:
        heavy = (
            PROMPT_COUNTER.get() is not None
            or may_hold_long_pieces(raw)
            or checked[0].prompt_off_loop(endpoint, raw, kept, may_hold_long_pieces, lambda _raw: body)  # parsed already
        )
        return hook(endpoint, body, raw, kept, _in_worker if heavy else None)  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001  (rendered under the lock, which answers its error as before)
        return None


def _in_worker(payload: bytes) -> bytes | None:
    """The prompt worker's answer to a ``gptoss-reference`` request (:mod:`mockoss.server.prompt_worker`)."""
    return ask_in_worker(b"gptoss-reference", payload)


@contextmanager
def _counted(endpoint: str, raw: bytes, body: Any, checked: tuple[Any, ...]) -> Iterator[Any]:
    """While a :data:`PROMPT_COUNTER` is set: the view, count and declared tools of
    :func:`before_lock`, handed on until the block ends (yields the view); else nothing (``None``)."""
    counter = PROMPT_COUNTER.get()
    if counter is None:
        yield None
        return
    try:
        view = checked[1].view(checked[2], body)  # as MockServer._reply builds it
    except Exception:  # noqa: BLE001  (built again under the lock, which answers its error as before)
        view = None
    rendered = _prompt_ids(endpoint, raw, view)
    counted = None
    if PRECOUNTED_PROMPT_TOKENS.get() is None:
        try:
            ids = None if rendered is None else rendered[1]
            counted = (ids.count(",") + 1 if ids else 0) if isinstance(ids, str) else _count(checked[0], endpoint, raw, body, counter)
        except Exception:  # noqa: BLE001  (the worker failed: counted under the lock, as without one)
            counted = None
    token = PRECOUNTED_PROMPT_TOKENS.set(counted) if counted is not None else None
    handed = rendered[0].set((view.body, rendered[1])) if rendered is not None else None
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
        if handed is not None:
            rendered[0].reset(handed)  # type: ignore[index]
        if declared is not None:
            DECLARED.reset(declared)


def _count(profile: Any, endpoint: str, raw: bytes, body: Any, counter: Callable[[str, bytes], int | None]) -> int | None:
    """``counter(endpoint, raw)`` (the Harmony count, in the worker process), or for a profile with
    its own count (``own_prompt_tokens``, :mod:`mockoss.server.profile_hooks`: Ollama's ``/v1``
    prompt, SGLang's chat template) that count, made here with text encoded in the worker process
    (:data:`ENCODE_ELSEWHERE`, for :func:`mockoss.harmony.encoding.encode_text`'s callers): it was
    made under the lock, in process, one 30,000-character word holding every other client ~0.5-1.4 s
    (t18 fuzz F5; the reply finds it there, :data:`PRECOUNTED_PROMPT_TOKENS`). ``None`` (counted
    under the lock) if the Harmony count it asks for failed or the tokenizer panicked."""
    own = getattr(type(profile), "own_prompt_tokens", None)
    if own is None:
        return counter(endpoint, raw)

    def harmony() -> int:
        counted = counter(endpoint, raw)
        if counted is None:
            raise RuntimeError("the prompt worker failed")  # counted under the lock, as without one
        return counted

    token = ENCODE_ELSEWHERE.set(encode_in_worker)
    try:
        return own(profile, endpoint, body, raw, harmony)  # type: ignore[no-any-return]
    except BaseException as exc:  # the worker's tokenizer panic: counted under the lock, which answers it
        if type(exc).__name__ != "PanicException":
            raise
        return None
    finally:
        ENCODE_ELSEWHERE.reset(token)


def _prompt_ids(endpoint: str, raw: bytes, view: Any) -> tuple[ContextVar[Any], str | BaseException] | None:
    """For a request whose reply carries its prompt's token ids (an endpoint with a
    ``prompt_ids_path``, :class:`mockoss.endpoints.Endpoint`: Ollama's ``/api/generate``, not
    ``raw``, not only loading the model) and whose profile has not cached them: the profile's
    variable for them and the ids :data:`PROMPT_RENDERER` rendered, or the tokenizer panic it
    reported (the profile raises it under the lock, where rendering in process would have raised
    it: the same 400, without the ~90 ms panic holding the GIL and the lock again); else ``None``
    (none needed, no renderer, or it failed: the reply renders them itself, as without one)."""
    render = PROMPT_RENDERER.get()
    found = ENDPOINTS.get(endpoint)
    if render is None or view is None or found is None or found.prompt_ids_path is None:
        return None
    try:
        slot = found.prompt_ids_slot(view)  # type: ignore[misc]  # the profile's variable, if it needs them
        if slot is None:
            return None
        ids = render(endpoint, raw)
    except Exception:  # noqa: BLE001  (rendered under the lock, as without a renderer)
        return None
    except BaseException as exc:  # the worker's tokenizer panic (PanicException, as pyo3's): handed on
        if type(exc).__name__ != "PanicException":
            raise
        return slot, exc
    return None if ids is None else (slot, ids)
