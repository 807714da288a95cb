"""Keep big requests from delaying small ones: count big prompts in a worker process, answer
big requests on a worker thread.

Why a process and not only a thread: the cost of a big request is rendering its prompt through
openai-harmony for ``usage.prompt_tokens`` (0.76 s for a 10 MB message, 8 s for 100,000 short
messages), and that Rust call holds the GIL from start to end, so a thread would stall every
other thread, the event loop included, just as long. One worker process
(:mod:`mockoss.server.prompt_worker`, started on the first big request; its client is
:mod:`mockoss.server.prompt_client`) does that render on the
other core while the server keeps answering; the count comes back exact
(:func:`mockoss.endpoints.prompt_tokens`, the same function). It costs ~60 MB of memory once
started, and nothing until then. The rest of a big request (JSON
parse, validation, the reply) runs on a worker thread, where the interpreter switches to the
event loop every few milliseconds.

Small requests (below :data:`OFFLOAD_BYTES`, without a long unbroken run of text:
:func:`has_long_run`, and for a batch endpoint few items: :func:`is_heavy`) stay on the event
loop, where they are cheapest, unless a big one is in flight: then they take a thread too, so
that the event loop never waits
on the server lock a worker thread holds (see :class:`Gate`). A small request that is the first of
its shape on a scenario with a long scripted answer takes a thread too: its plans are built there
before the lock (:mod:`mockoss.server.warmup`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockoss.collector import COLLECTOR
from mockoss.endpoints import ENDPOINTS
from mockoss.harmony.prompt._common import _text
from mockoss.jsonbody import parse_json_and_hand_on
from mockoss.server.longpieces import MAX_WINDOW, PIECE_BUDGET, may_hold_long_pieces
from mockoss.server.prelock import wanted as prelock_wanted
from mockoss.server.prompt_client import count_in_worker, encode_in_worker, render_in_worker, shutdown
from mockoss.server.warmup import WARM_BEFORE_LOCK
from mockoss.server.warmup import wanted as warm_wanted
from mockoss.workers import DaemonPool, run_off_loop

_T = TypeVar("_T")

if TYPE_CHECKING:
    from mockoss.profiles.base import Reply
    from mockoss.server.core import MockServer
    from mockoss.server.transport import Delivery

__all__ = [
    "BATCH_ENDPOINTS", "BATCH_ITEMS", "LONG_RUN_WINDOW", "OFFLOAD_BYTES", "SIDE_ROUTE_BYTES", "SIDE_ROUTE_OBJECTS", "Gate", "count_in_worker", "encode_in_worker", "has_long_run", "is_heavy", "probe_elsewhere",
    "render_in_worker", "shutdown", "side_route_heavy", "wanted_off_loop",
]  # fmt: skip

#: How many worker threads each app's :class:`Gate` answers requests on off the event loop: daemon
#: threads, so that a stopping server does not wait for a build nobody will read
#: (:mod:`mockoss.workers`); 40, as many as ``anyio.to_thread``'s default limiter allowed before.
#: One pool per app, as that limiter is one per event loop: a process-wide pool let one server's
#: 40 long builds queue another's (pytest runs several servers in one process; issue 9, the
#: eleventh session's review, finding 7).
THREADS = 40

#: Bodies at least this big (bytes) are counted in the worker process and answered on a thread:
#: rendering 256 KiB of prompt costs ~20 ms (one message) to ~0.5 s (thousands of short ones).
OFFLOAD_BYTES = 256 * 1024

#: The largest window of :func:`has_long_run` (:data:`mockoss.server.longpieces.MAX_WINDOW`):
#: a body holding one pre-tokenizer piece of twice this many bytes always goes off the loop.
LONG_RUN_WINDOW = MAX_WINDOW


#: Endpoints whose body may batch prompts (``"prompt": ["a", "b", …]``, the
#: :class:`~mockoss.schemas.completions.CompletionRequest` schema): each prompt is tokenized for
#: ``usage`` and answered with its own choice, or its own frame per generated token, so the cost
#: grows with the number of prompts, not with bytes (issue 9, the breaker's D8: 40,000 ``"hi"``, a
#: 240 KB body, held the event loop ~10 s).
BATCH_ENDPOINTS = frozenset(name for name, endpoint in ENDPOINTS.items() if endpoint.schema_path.endswith(":CompletionRequest"))

#: A batch endpoint's body with at least this many commas goes off the loop (see :func:`is_heavy`).
BATCH_ITEMS = 128


def is_heavy(endpoint: str, raw: bytes, offload_bytes: int = OFFLOAD_BYTES) -> bool:
    """Whether ``raw``, a body for ``endpoint``, is answered off the event loop: at least
    ``offload_bytes`` bytes, a long unbroken run of text (:func:`has_long_run`), or, for a
    :data:`BATCH_ENDPOINTS` body, at least :data:`BATCH_ITEMS` commas.

    Why commas, and why only there: every JSON array of ``n`` items holds ``n - 1`` commas, so a
    batch of ``n`` prompts has at least ``n - 1``, and a body with few commas has few prompts
    (measured, vLLM profile, 255 distinct prompts streamed with ``continuous_usage_stats``: 50 ms,
    ~0.2 ms a prompt, so 128 prompts ~25 ms). Their cost on the loop still grows with the body's
    bytes and the scripted answer's length, as a chat request's does (a review: 100 prompts
    streamed with usage against a 1,500-token answer, 113 ms). Commas in text or in a flat list of
    token ids only send a request off the loop, where it is answered the same. ``bytes.count`` is
    one pass in C (~20 us for 240 KB,
    nothing for a usual completions body); chat and Responses bodies, the hot path, never pay it
    (the previous attempt counted items in every body: 16 us on a 23 KB chat turn).
    """
    return (
        len(raw) >= offload_bytes
        or has_long_run(raw)
        or (endpoint in BATCH_ENDPOINTS and raw.count(b",") >= BATCH_ITEMS)
    )


def has_long_run(raw: bytes, budget: int = PIECE_BUDGET) -> bool:
    """Whether the text of ``raw`` may hold pre-tokenizer pieces whose byte-pair merging costs
    more than ``budget`` bytes² (~0.31 ns each: 64 Mi is ~21 ms): one long piece, or many just
    under any window (:func:`mockoss.server.longpieces.may_hold_long_pieces`, which reads the raw
    JSON: escapes and UTF-8 included). No false negative; a false positive (CJK text, compact JSON
    or base64 in long stretches without a space) only answers the request on a thread.

    Why: openai-harmony's BPE (tiktoken's algorithm) is quadratic in the length of one piece of
    its pre-tokenizer split (o200k's pattern: a run of letters, of punctuation, or of whitespace
    of any mix). A 150 KB body of one word cost 10 s of event loop (issue 9, a reviewer); then,
    with ASCII runs caught, ``" \\n" * 87000`` (261 KB, one whitespace piece) held another client
    9.4 s, ``"\\u00a0 " * 40000`` 4.5 s, and 60 tool names of 3,900 letters 283 ms (issue 9
    review, findings 1 and 11). Cost per request: nothing up to 8 KiB; ~5 us for the 23 KB
    agent turn of ``benchmarks/bench_prompt.py`` (one ``bytes.find`` per window of ~1.4 KB).
    """
    return may_hold_long_pieces(raw, budget) or (len(raw) * len(raw) > budget and _joined_parts_long(raw, budget))


def _joined_parts_long(raw: bytes, budget: int) -> bool:
    """Whether the texts that content-part lists in ``raw`` join into may hold pieces costing more
    than ``budget`` (:func:`~mockoss.server.longpieces.may_hold_long_pieces` of those texts).

    The raw check finds breaks in every JSON string, but a list of content parts is rendered as the
    ``text`` of its parts joined with nothing between them (vLLM's ``flatten_input_text_content``,
    :func:`mockoss.harmony.prompt._common._flatten_text`), so a break in a field that is never
    rendered, between two parts, is not one: 2,000 parts of 80 letters, each with ``"j": " a"``
    (248 KB), held every other client 8.5 s (issue 9, the seventh session's final review). Every
    list of two or more such parts the renderer joins (:func:`_part_lists`) is joined as it joins
    it, and the joined texts are checked. Called only for a body of more than 8 KiB; its parse is
    handed on to the answer (:func:`mockoss.jsonbody.parse_json_and_hand_on`), so what this adds
    is the walk over the messages (a scan of the raw bytes for ``"text"`` cost ~9 us for the 23 KB
    agent turn); a malformed body is left to be refused."""
    try:
        body = parse_json_and_hand_on(raw)  # read only; the answer's parse takes it
    except (ValueError, RecursionError):
        return False
    joined = [
        "".join(map(_text, texts))
        for parts in _part_lists(body)
        if len(texts := [item if type(item) is str else item["text"] for item in parts if type(item) is str or (type(item) is dict and item.get("text") is not None)]) > 1
    ]
    return bool(joined) and may_hold_long_pieces(json.dumps(joined, ensure_ascii=False).encode("utf-8", "surrogatepass"), budget)


def _part_lists(body: object) -> list[list[object]]:
    """The lists of two or more content parts the renderer joins (the callers of
    :func:`mockoss.harmony.prompt._common._flatten_text`): a chat message's ``content``, a
    Responses input item's ``content`` and ``function_call_output`` ``output``, and Responses
    ``instructions``. One comprehension per list of items (~2 us for 50 messages)."""
    if type(body) is not dict:
        return []
    found: list[list[object]] = []
    for key in ("messages", "input"):
        items = body.get(key)
        if type(items) is list:
            found += [v for item in items if type(item) is dict and type(v := item.get("content")) is list and len(v) > 1]
            if key == "input":
                found += [v for item in items if type(item) is dict and type(v := item.get("output")) is list and len(v) > 1]
    instructions = body.get("instructions")
    if type(instructions) is list and len(instructions) > 1:
        found.append(instructions)
    return found




#: A side route's body of at least this many bytes goes off the loop (:func:`side_route_heavy`).
SIDE_ROUTE_BYTES = 32 * 1024
#: A side route's body with at least this many ``{`` goes off the loop (:func:`side_route_heavy`).
SIDE_ROUTE_OBJECTS = 128


def wanted_off_loop(server: MockServer, endpoint: str, raw: bytes, headers: Mapping[str, str]) -> bool:
    """Whether a request that is not heavy by its size (:func:`is_heavy`) still goes to a worker
    thread: the first request of a shape on a long scripted answer (:func:`mockoss.server.warmup.wanted`)
    or its profile's own heavy prompt render (:func:`mockoss.server.prelock.wanted`). Asked by
    :meth:`Gate.respond` and by the HTTP short path (:mod:`mockoss.server.fastpath`)."""
    return warm_wanted(server, endpoint, raw, headers) or prelock_wanted(server, endpoint, raw)


def side_route_heavy(raw: bytes, offload_bytes: int = OFFLOAD_BYTES) -> bool:
    """Whether ``raw``, a side route's body (``MockServer.probe``: vLLM's ``/tokenize``,
    llama-server's ``/apply-template``, …), is answered by :func:`probe_elsewhere` on a thread:
    :func:`is_heavy`, at least :data:`SIDE_ROUTE_BYTES` (or ``offload_bytes``, if smaller), or at
    least :data:`SIDE_ROUTE_OBJECTS` ``{``.

    Why: a side route's cost grows with its body in ways a chat request's does not, and side routes
    are not the hot path, so a thread's ~0.1 ms is cheap for them. Rendering a chat prompt
    (``/tokenize`` with ``messages``, ``/apply-template``) costs ~70 us a message, and every
    message is a JSON object: 7,000 short messages (254 KB, under :data:`OFFLOAD_BYTES`) held the
    event loop 480 ms (issue 9, the breaker's finding 5); 128 objects are ~9 ms. A string per
    token (``return_token_strs``, ``with_pieces``) costs ~1 us a token even decoded at once
    (36,000 words, 240 KB: 107,000 tokens, ~0.1 s with the reply's JSON; finding 8); 32 KiB of
    text is ~15,000 tokens. A brace in text only sends the body off the loop, where it is answered
    the same. ``bytes.count`` is one pass in C."""
    return (
        len(raw) >= min(SIDE_ROUTE_BYTES, offload_bytes)
        or is_heavy("", raw, offload_bytes)
        or raw.count(b"{") >= SIDE_ROUTE_OBJECTS
    )


def probe_elsewhere(server: MockServer, method: str, path: str, body: bytes) -> Reply:
    """``server.probe`` (on a worker thread) with text tokenized and chat prompts rendered in the
    worker process (:data:`mockoss.harmony.encoding.ENCODE_ELSEWHERE`,
    :data:`~mockoss.harmony.encoding.RENDER_ELSEWHERE`): for a side route's big body, long word or
    many messages (:func:`side_route_heavy`), such as vLLM's or llama-server's ``/tokenize`` (one
    50,000-character word: ~0.8 s holding the GIL in process, every other client waiting;
    ``benchmarks/bench_isolation.py`` case ``tokenize``) or ``/apply-template`` (40,000 short
    messages: ~3 s; the breaker's finding 5)."""
    from mockoss.harmony.encoding import ENCODE_ELSEWHERE, RENDER_ELSEWHERE

    token = ENCODE_ELSEWHERE.set(encode_in_worker)
    rendering = RENDER_ELSEWHERE.set(render_in_worker)
    try:
        return server.probe(method, path, body)
    finally:
        RENDER_ELSEWHERE.reset(rendering)
        ENCODE_ELSEWHERE.reset(token)


def _respond_counting(server: MockServer, endpoint: str, raw: bytes, headers: Mapping[str, str]) -> tuple[Reply, Delivery | None]:
    """``server.respond`` (on a worker thread) with the prompt counted in the worker process once
    the request is known valid, before the server lock (:data:`mockoss.server.prelock.PROMPT_COUNTER`),
    and rendered there when the reply carries its token ids (:data:`mockoss.server.prelock.PROMPT_RENDERER`:
    Ollama's ``/api/generate`` ``context``).

    The garbage collector is paused meanwhile (:data:`mockoss.collector.COLLECTOR`): a big body's
    parsed objects (1.5 million for 100,000 declared tools) are what a full collection triggered
    by the validation's allocations would walk, each pass 0.24-0.40 s holding the interpreter
    (``bench_isolation.py`` case ``tools100k``: another client waited up to 516 ms); they are freed
    by reference counting when the request ends (a parsed body holds no cycle), so the pause
    leaves nothing for a later pass to walk (issue 9, eighth session)."""
    from mockoss.server.prelock import PROMPT_COUNTER, PROMPT_RENDERER

    token = PROMPT_COUNTER.set(count_in_worker)
    rendering = PROMPT_RENDERER.set(render_in_worker)
    COLLECTOR.pause()
    try:
        return server.respond(endpoint, raw, headers)
    finally:
        COLLECTOR.resume()
        PROMPT_RENDERER.reset(rendering)
        PROMPT_COUNTER.reset(token)


class Gate:
    """Decides, per request, where :meth:`MockServer.respond` runs (one per app; event-loop only).

    ``busy`` counts requests answered off the loop. While it is 0 no worker thread can hold the
    server lock, so a small request on the loop never blocks on it. ``threads`` is the app's own
    pool of :data:`THREADS` daemon threads (:meth:`off_loop`; the side routes' heavy bodies and
    the proxy's off-loop work use it too).
    """

    def __init__(self, offload_bytes: int = OFFLOAD_BYTES) -> None:
        self.offload_bytes = offload_bytes
        self.busy = 0
        self.threads = DaemonPool(THREADS, "mockoss-offload")

    async def respond(
        self, server: MockServer, endpoint: str, raw: bytes, headers: Mapping[str, str]
    ) -> tuple[Reply, Delivery | None]:
        """Answer on the loop (small, nothing in flight) or on a worker thread (big, or while a
        big one is in flight), a big body's prompt counted in the worker process once the request
        is known valid: a request refused by validation (an unknown model) is answered without the
        count, as vLLM checks the model before it renders the prompt
        (vllm-project/vllm ``serving_chat.py`` ``create_chat_completion``: ``_check_model`` first).
        Counting first made 20 MB of long words naming an unknown model take 57.7 s to get its 404
        (``tests/test_fuzz_regressions.py``)."""
        big = is_heavy(endpoint, raw, self.offload_bytes)
        if not big and self.busy == 0 and not wanted_off_loop(server, endpoint, raw, headers):
            return server.respond(endpoint, raw, headers)
        token = WARM_BEFORE_LOCK.set(True)  # the thread runs in a copy of this context
        try:
            if big:
                return await self.off_loop(_respond_counting, server, endpoint, raw, headers)
            return await self.off_loop(server.respond, endpoint, raw, headers)
        finally:
            WARM_BEFORE_LOCK.reset(token)

    async def off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on :attr:`threads`, counted in ``busy`` until its thread is done with it
        (:func:`mockoss.workers.run_off_loop`'s ``done``: also when it could not be submitted, a
        thread failing to start, so that ``busy`` is not left raised and the short path off for
        good; issue 9, the eleventh session's review, finding 6)."""
        self.busy += 1
        return await run_off_loop(self.threads, fn, *args, done=self._ended)

    def _ended(self) -> None:
        """A request answered off the loop is done with the server lock (on the loop): counted
        when its thread is done, not when its task is (a task cancelled by a stopping server
        returns at once, its thread still running, holding the lock)."""
        self.busy -= 1
