"""Profile ``gptoss-reference``: the Responses server of openai/gpt-oss (``gpt_oss.responses_api``).

Source: openai/gpt-oss@7b583341fe16729127f6d5b94a7b09ccae97e1a1 (package version 0.0.9):
``gpt_oss/responses_api/api_server.py`` (``create_api_server``), ``types.py``, ``events.py``,
``serve.py``. The server is a FastAPI app around a pluggable ``infer_next_token(tokens,
temperature, new_request) -> int``; it parses with openai-harmony (gpt-oss declares it unpinned,
so 0.0.8, the newest release): ``StreamableParser`` token by token while streaming, then
``parse_messages_from_completion_tokens`` on the kept tokens for the final response.

What it serves: ``POST /v1/responses`` only (plus FastAPI's ``/docs``, ``/redoc``,
``/openapi.json``, not emulated); every other route is FastAPI's ``{"detail":"Not Found"}`` (404)
or ``{"detail":"Method Not Allowed"}`` (405). No ``/v1/models``, no health route; any ``model``
is accepted and every response says ``"model":"gpt-oss-120b"``. Request validation errors are
FastAPI's 422 ``{"detail":[…]}``, pydantic's entries for the server's own models
(:mod:`.request`); an exception in the server (a Harmony parse error of the final response, a
``function_call_output`` without its call, a lone surrogate in the prompt's text, ``metadata:
null``; :func:`~mockoss.profiles.gptoss_ref.prompt.prompt_tokens`) is Starlette's 500 ``Internal
Server Error`` as ``text/plain``, or, once a stream has started, the connection dropped after the
events so far (the openai SDK raises ``APIConnectionError``). Ids are ``resp_``, ``rs_``,
``item_`` (messages), ``fc_`` and ``call_`` + 32 hex digits (``uuid4().hex``). Usage counts the
rendered prompt and the kept output tokens (the final stop token is not kept); there is no
``incomplete`` status: a response cut by ``max_output_tokens`` is ``completed``. The prompt of a
heavy request (a long word, many items, a continuation of a big kept chain) is rendered before the
server lock, in the prompt worker process (:mod:`.prerender`), with the same tokens.

Checked against the real code: goldens recorded from the server itself (uvicorn, a scripted
``infer_next_token``; ``tools/goldens/gptoss_reference.py``) for every golden case, compared byte
for byte after normalisation by ``tests/golden/test_gptoss_reference_goldens.py``; its own tests
(``tests/test_api_endpoints.py``, ``tests/test_responses_api.py``) ran against it and are
converted in ``tests/conformance/upstream/test_gptoss_reference_upstream.py``. The response store
(``store: true``, ``previous_response_id``: the earlier turns prepended, ``instructions``
inherited; :mod:`.store`) is checked the same way on chains of requests
(``tools/goldens/gptoss_reference_store.py``, tests/profiles/test_gptoss_reference_store.py: 9
chains, 31 requests, each byte-identical, their ``metadata.__debug`` showing the merged prompt; the
same code in every tag v0.0.5 to v0.0.9).
Not checked: the browser and code-interpreter tools (they need network backends or Docker; a
request declaring them is answered as if it declared none). The goldens cover 66
completions × 11 exchanges (streamed or not, tools or not, ``tool_choice``, ``reasoning.effort``,
``instructions``, token limits, ``metadata.__debug``) and 13 request variants (input item lists,
an unknown ``call_id``, ``reasoning: null``, ``max_output_tokens: null``, invalid literals, a
missing ``input``): 760 of 761 byte-identical; the explained exception is a declared
``browser_search`` tool (its namespace in the prompt, not emulated). The same
goldens from the v0.0.8 tag match ``gptoss-reference@0.0.8`` equally (the timeline,
:mod:`.releases`), and goldens from v0.0.9 run with oss-harmony 0.0.11 instead match with
``harmony_library=oss-harmony``. Releases before 0.0.8 are read from the tags' source only.
Bad and edge-case request bodies (lone surrogates in each text field, badly typed items, ``null``
fields, bodies that are not JSON objects; some 70 bodies) were sent to the real server and to the
profile: same status, content type and error body (tests/profiles/test_gptoss_reference.py). The
openai SDK (3.57) was run against the real server and against the profile on the same
completions with the same outcomes: ``responses.create`` (streamed or not) works;
``responses.stream(...)`` raises ``RuntimeError: Received a content event for output index 1
before receiving its output item`` on a reasoning-then-answer completion (the shifted indices) and
``APIConnectionError`` on a cut stream (tests/e2e/test_gptoss_reference_openai.py).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from mockoss.harmony import Completion, load_encoding
from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    Reply,
    RequestContext,
    ResponsesRequestView,
    ServerInfo,
    check_bool_switches,
    check_choice_switches,
)
from mockoss.profiles.fastapi_body import fastapi_text_reply, unparsed_body
from mockoss.profiles.gptoss_ref.loop import CALL, RETURN, Rules
from mockoss.profiles.gptoss_ref.objects import response_object
from mockoss.profiles.gptoss_ref.plan import FIRST_EVENT, Run, planned_run
from mockoss.profiles.gptoss_ref.prerender import PRERENDERED, Prerendered, handed, kept_entry, off_loop, prepare
from mockoss.profiles.gptoss_ref.prompt import PromptError, prompt_tokens
from mockoss.profiles.gptoss_ref.request import body_error, validation_errors
from mockoss.profiles.gptoss_ref.store import forgotten_note, keep, merged
from mockoss.profiles.replay import IdRecorder
from mockoss.profiles.wire import dumps

__all__ = ["GptossReferenceProfile"]

_PLAIN = (("content-type", "text/plain; charset=utf-8"),)
#: The body :meth:`GptossReferenceProfile.check_request` last validated and pydantic's result, so
#: that :meth:`~GptossReferenceProfile.responses` does not validate the same request twice (the
#: server core calls both, in this order, in one context; the body object itself is the key).
_VALIDATED: ContextVar[tuple[Any, Any] | None] = ContextVar("mockoss_gptoss_validated", default=None)
#: Switches with a fixed set of values (checked in ``__post_init__``).
_CHOICES: dict[str, tuple[str, ...]] = {"harmony_library": ("openai-harmony-0.0.8", "oss-harmony"), "end_of_script": ("return", "error")}
_STOPS = (RETURN, CALL)
_EMPTY_OUTPUT = '{"output":[]'


def _json(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status=status, body=dumps(value).encode(), headers=headers)


def _rejected(status: int, value: Any) -> Reply:
    """A validation error reply, or Starlette's 500 when FastAPI cannot write it: a lone
    surrogate in the ``input`` an entry echoes (``UnicodeEncodeError``; seen from the real server)."""
    try:
        return _json(status, value)
    except UnicodeEncodeError:
        return internal_error()


def _encodable(text: Any) -> bool:
    """Whether ``text`` (a string or ``None``) can be written as UTF-8 (no lone surrogate)."""
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def internal_error(log: tuple[str, ...] = ()) -> Reply:
    """Starlette's ``ServerErrorMiddleware`` answer to an unhandled exception: 500, ``text/plain``
    (``log``: the request's server-log lines)."""
    return Reply(status=500, body=b"Internal Server Error", headers=_PLAIN, log=log)


@dataclass(frozen=True, slots=True)
class GptossReferenceProfile:
    """The gpt-oss reference Responses server (see the module docstring for sources and checks).

    Attributes:
        harmony_library: the Harmony library the server runs: ``openai-harmony-0.0.8`` (what
            ``pip install gpt-oss`` resolves today; gpt-oss does not pin it) or ``oss-harmony``
            (a deployment that installed the fork instead).
        end_of_script: what the scripted backend does when a completion ends without
            ``<|return|>``/``<|call|>`` (the server's loop only stops on those): ``return`` gives
            ``<|return|>`` (the goldens' backend), ``error`` raises, so the stream is cut and a
            non-streamed request gets the 500. A mockoss choice, not the server's: a real model
            keeps sampling.
        conversation_start_date: the ``Current date:`` of the system message (the server uses
            today's date; fixed here for determinism). Its length never changes the token count.
        default_max_output_tokens: ``max_output_tokens`` when the request has none
            (``types.DEFAULT_MAX_OUTPUT_TOKENS``): 131072 from v0.0.6 (openai/gpt-oss#165), 10000 before.
        event_item_ids: every event names its item (``item_id``) and message items get ``item_``
            ids (v0.0.9, openai/gpt-oss#199); false, as before: every event's ``item_id`` is
            ``"item_1234"`` (the event models' default) and message items have no ``id`` key.
        analysis_recipient_reasoning: before v0.0.9, an ``analysis`` message with a recipient is
            also closed as reasoning in the stream and is a reasoning item in the response
            (unless it became a function call); v0.0.9 skips it.
        stream_browser_calls: v0.0.9 streams a ``browser.*`` recipient (no browser tool declared)
            as a function call; before, it got no event.
        strict_content_type: the FastAPI the deployment runs (gpt-oss requires
            ``fastapi>=0.116.1``, every tag v0.0.5 to v0.0.9; no lock file): ``false``,
            fastapi <= 0.131, a request with no ``Content-Type`` is parsed as JSON; ``true``,
            fastapi >= 0.132.0 (what ``pip install gpt-oss`` resolves today), it is refused as
            text like ``text/plain`` (422, :meth:`content_type_refusal`). Default ``true``, as
            on ``sglang`` (fastapi unpinned too): what a deployment installed today runs (the
            review of issue 9, 13th session; was ``false``, the reply bytes before the switch).
    """

    default_model: ClassVar[str] = "gpt-oss-120b"
    model_check: ClassVar[bool] = False

    name: str = "gptoss-reference"
    endpoints: frozenset[str] = frozenset({"responses"})
    harmony_library: Literal["openai-harmony-0.0.8", "oss-harmony"] = "openai-harmony-0.0.8"
    end_of_script: Literal["return", "error"] = "return"
    conversation_start_date: str = "2025-08-05"
    default_max_output_tokens: int = 131072
    event_item_ids: bool = True
    analysis_recipient_reasoning: bool = False
    stream_browser_calls: bool = True
    strict_content_type: bool = True

    def __post_init__(self) -> None:
        """Check the switches (``ValueError`` naming the allowed values; the registry makes it a
        ``ProfileError``: a 400 for ``X-Mockoss-Switch``, a start-up error for ``--switch``).
        ``conversation_start_date`` may be given as a date (YAML reads ``2025-08-05`` as one) and
        is kept as ``YYYY-MM-DD`` text, the ``strftime("%Y-%m-%d")`` the server writes."""
        check_choice_switches(self, _CHOICES)
        check_bool_switches(self, ("event_item_ids", "analysis_recipient_reasoning", "stream_browser_calls", "strict_content_type"))
        tokens = self.default_max_output_tokens
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ValueError(f"default_max_output_tokens must be a positive integer, got {tokens!r}")
        day = self.conversation_start_date
        try:
            text = day.isoformat() if isinstance(day, datetime.date) and not isinstance(day, datetime.datetime) else str(day)
            if not isinstance(day, (str, datetime.date)) or datetime.date.fromisoformat(text).isoformat() != text:
                raise ValueError
        except ValueError:
            raise ValueError(f"conversation_start_date must be a date as YYYY-MM-DD, got {day!r}") from None
        object.__setattr__(self, "conversation_start_date", text)

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`responses` (the only endpoint)."""
        if endpoint != "responses":
            raise ValueError(f"profile gptoss-reference does not serve endpoint {endpoint!r}")
        return self.responses(completion, request, ctx)

    def _backend_tokens(self, completion: Completion) -> tuple[list[int], str | None]:
        """What ``infer_next_token`` returns: the completion up to its first stop token, then
        ``<|return|>`` or nothing (``end_of_script``); with the exception text when it runs out."""
        tokens: list[int] = []
        for token in completion.tokens:
            tokens.append(token)
            if token in _STOPS:
                return tokens, None
        if self.end_of_script == "return":
            return [*tokens, RETURN], None
        return tokens, "RuntimeError: scripted completion exhausted"

    def _rules(self) -> Rules:
        return Rules(self.event_item_ids, self.analysis_recipient_reasoning, self.stream_browser_calls)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``: FastAPI's 422 for a body the server's pydantic models reject
        (:mod:`.request`); Starlette's plain 500 where the server's route raises (the prompt
        cannot be built, :func:`~mockoss.profiles.gptoss_ref.prompt.prompt_tokens`;
        ``metadata: null``); else the events of :func:`~mockoss.profiles.gptoss_ref.loop.run_loop`
        and the response object of ``generate_response``; streamed as ``event: TYPE`` /
        ``data: {…}`` frames numbered by ``sequence_number`` from 0, with no ``[DONE]``. A lone
        surrogate in ``previous_response_id`` (echoed) is a 500, or a stream cut before its first
        event. A ``previous_response_id`` naming a response this server kept (``store: true``)
        answers the request with the kept turns before its ``input`` (:mod:`.store`, read from
        ``ctx.kept``: nothing is read or kept when it is ``None``); one mockoss's byte bound forgot
        is answered as sent, with a line in ``Reply.log``; a finished ``store: true`` response is kept."""
        validated = _VALIDATED.get()
        if validated is not None and validated[0] is request.body:  # check_request just did it
            checked, errors = validated[1], []
        else:
            checked, errors = validation_errors(request.body)
        body = dict(request.body)
        if checked is None:
            return _rejected(422, {"detail": errors})
        if "max_output_tokens" in body:  # pydantic's lax int: "7" and 7.0 are 7
            body["max_output_tokens"] = checked.max_output_tokens
        previous, note = checked.previous_response_id, ()
        entry = kept_entry(ctx.kept, previous)
        if entry is not None:  # the earlier turns of a kept response (.store)
            body["input"], body["instructions"] = merged(entry, body["input"], checked.instructions)
        elif previous:
            note = forgotten_note(ctx.kept, previous)
        try:
            # Rendered before the lock from this body and this kept entry (.prerender), else now.
            prompt = handed(request.body, entry, self.conversation_start_date, self.harmony_library)
            if prompt is None:
                prompt = prompt_tokens(body, self.conversation_start_date, self.harmony_library)
        except PromptError:  # (an agent loop's tool output whose kept call was forgotten: say so)
            return internal_error(note)
        if body.get("metadata", {}) is None:  # StreamResponsesEvents: request_body.metadata.get(...)
            return internal_error()
        response_id = ctx.ids.next("resp_")
        debug = bool((body.get("metadata") or {}).get("__debug", False))
        max_tokens = body.get("max_output_tokens", self.default_max_output_tokens)
        run = planned_run(self, completion, max_tokens, debug, ctx.ids)  # memoised per request shape (.plan)
        ids = IdRecorder.replay(run.calls, ctx.ids)  # the loop's and generate_response's ids, in their order
        if not _encodable(body.get("previous_response_id")):
            # The echoed id cannot be written as UTF-8: pydantic's PydanticSerializationError, raised
            # by FastAPI's response serialisation (500) or by the stream's first event (the
            # connection drops after the 200 headers, before any event); seen from the real server.
            return internal_error() if not request.stream else Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=(),
                                                                      abort="PydanticSerializationError: surrogates not allowed")
        final = None if run.output is None else self._final(run, ids, prompt, body, response_id, ctx, debug, max_tokens)
        if final is not None and checked.store:  # store_callback, once generate_response returned
            keep(ctx.kept, response_id, body["input"], json.loads(final)["output"], body.get("instructions"))
        if not request.stream:
            return internal_error() if final is None else Reply(status=200, body=final, log=note)
        initial = dumps(response_object(response_id=response_id, created=ctx.created, body=body, status="in_progress", output=[],
                                        usage=None, max_output_tokens=max_tokens))
        frames = [
            f"event: response.created\ndata: {{\"sequence_number\":0,\"type\":\"response.created\",\"response\":{initial}}}\n\n".encode(),
            f"event: response.in_progress\ndata: {{\"sequence_number\":1,\"type\":\"response.in_progress\",\"response\":{initial}}}\n\n".encode(),
            *run.frames.fill(ids),
        ]
        if final is not None:
            number = FIRST_EVENT + run.events
            frames.append(b'event: response.completed\ndata: {"sequence_number":%d,"type":"response.completed","response":%s}\n\n' % (number, final))
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames), abort=run.crash, log=note)

    def _final(
        self, run: Run, ids: list[bytes], prompt: list[int], body: dict[str, Any], response_id: str, ctx: RequestContext, debug: bool,
        max_tokens: int | None,
    ) -> bytes:
        """``generate_response``'s response object (``run.output`` built), as JSON: the memoised
        ``output`` with this request's ids, then the fields that come from the request."""
        output_tokens = run.output_tokens
        usage = None
        if output_tokens:
            usage = {"input_tokens": len(prompt), "output_tokens": len(output_tokens), "total_tokens": len(prompt) + len(output_tokens)}
        metadata = None
        if debug:
            encoding = load_encoding()
            metadata = {"__debug": encoding.decode_utf8([*prompt, *output_tokens]), "__debug_input": encoding.decode_utf8(prompt),
                        "__debug_output": encoding.decode_utf8(list(output_tokens))}
        rest = dumps(response_object(response_id=response_id, created=ctx.created, body=body, status="completed", output=[],
                                     usage=usage, error=run.error, metadata=metadata, max_output_tokens=max_tokens))
        assert rest.startswith(_EMPTY_OUTPUT)  # ResponseObject's first field
        assert run.output is not None
        return b"".join((b'{"output":', run.output.fill(ids), rest[len(_EMPTY_OUTPUT):].encode()))

    def prompt_off_loop(self, endpoint: str, raw: bytes, kept: Any, long_pieces: Callable[[bytes], bool], parse: Callable[[bytes], Any]) -> bool:
        """Whether the HTTP layer answers ``raw`` on a worker thread for this profile's prompt
        render (:func:`.prerender.off_loop`: many items, a big kept chain; called on the event
        loop by :func:`mockoss.server.prelock.wanted`)."""
        return off_loop(endpoint, raw, kept, long_pieces, parse)

    def prompt_before_lock(
        self, endpoint: str, body: Any, raw: bytes, kept: Any, elsewhere: Callable[[bytes], bytes | None] | None
    ) -> tuple[ContextVar[Any], Prerendered] | None:
        """The prompt of the request :meth:`check_request` just validated (``body``), rendered
        before the server lock (:func:`.prerender.prepare`; ``kept``: the server's kept responses,
        read only; ``elsewhere``: the prompt worker process, for a heavy request), with the
        variable :meth:`responses` reads it from; ``None``: rendered under the lock. Called by
        :func:`mockoss.server.prelock.before_lock` on a worker thread."""
        validated = _VALIDATED.get()
        if endpoint != "responses" or validated is None or validated[0] is not body:
            return None
        found = prepare(body, validated[1], kept, self.conversation_start_date, self.harmony_library, raw, elsewhere)
        return None if found is None else (PRERENDERED, found)

    def check_request(self, endpoint: str, body: Any, raw: bytes | None = None) -> Reply | None:
        """The server's own request validation, run by the server core before its generic schema:
        FastAPI's 422 for a body the reference's pydantic models reject, or its 422 or 400 for
        one that is not a JSON object (:mod:`.request`; ``body`` is the parsed JSON, ``None`` when
        ``raw`` is not JSON), else ``None``. The core then checks only the fields it needs itself (``input``, ``model``,
        ``stream``) and leaves lone surrogates to :meth:`responses` (the reference accepts them
        where it only reads them: ``model``, ``metadata``)."""
        if not isinstance(body, Mapping):
            answer = body_error(body, raw)
            return None if answer is None else _rejected(*answer)
        checked, errors = validation_errors(body)
        _VALIDATED.set((body, checked) if checked is not None else None)
        return _rejected(422, {"detail": errors}) if errors else None

    def content_type_refusal(self, endpoint: str, content_type: str | None, parsed: bool, raw: bytes) -> Reply | None:
        """FastAPI's default 422 to a non-empty body it does not parse (``text/plain``,
        form-urlencoded; no header when ``strict_content_type`` is on), 500 for bytes that are not
        UTF-8 (:func:`mockoss.profiles.fastapi_body.fastapi_text_reply`), else ``None``. The
        server has no media-type check; its ``RequestValidationError`` handler only logs and
        returns FastAPI's answer (openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py
        ``log_validation_error``; ``FastAPI()`` sets no ``strict_content_type``)."""
        return fastapi_text_reply(raw) if unparsed_body(content_type, raw, self.strict_content_type) else None

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """FastAPI's error bodies: a rejected request (mockoss's 400) is a 422 ``{"detail":[{…}]}``
        (entry ``type: "value_error"``, ``loc`` from ``param``: the reference's exact pydantic
        entries are reproduced only for ``tool_choice`` and ``reasoning.effort``); any other status
        is ``{"detail": message}`` (``HTTPException``)."""
        if status == 400:
            loc = ["body", *(param.split(".") if param else ())]
            return _json(422, {"detail": [{"type": "value_error", "loc": loc, "msg": message, "input": None}]})
        return _json(status, {"detail": message})

    def model_not_found(self, model: str) -> Reply:
        """Never used by the server (it accepts any model); kept for the contract: 404 ``Not Found``."""
        return _json(404, {"detail": "Not Found"})

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """The server has no identity or health route: nothing is a probe."""
        return None

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """Starlette's router: 404 ``{"detail":"Not Found"}``, 405 ``{"detail":"Method Not
        Allowed"}`` with ``allow: POST`` (``/v1/responses`` is the only route)."""
        if status == 405:
            return _json(405, {"detail": "Method Not Allowed"}, (("allow", "POST"),))
        return _json(404, {"detail": "Not Found"})
