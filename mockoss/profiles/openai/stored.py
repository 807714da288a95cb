"""The ``openai`` profile's routes on stored responses: ``GET /v1/responses/{id}``, ``GET
/v1/responses/{id}/input_items``, ``POST /v1/responses/{id}/cancel`` and ``DELETE
/v1/responses/{id}``, in the shapes of the OpenAI API reference.

The API stores every response unless the request says ``store: false`` (the profile already
continues such ids, :mod:`mockoss.profiles.openai.responses_input`), so the profile keeps what
these routes return in the server's :attr:`RequestContext.kept
<mockoss.profiles.base.RequestContext.kept>` (per server, bounded in bytes, emptied on reset, dropped
again when the scripted transport cuts the reply before its end): the response as the create call
returned it (a stream's ``response.completed``/``response.incomplete`` response) and the request's
input items; for a ``background`` stream, its events too.

Documented (developers.openai.com/api/reference, responses methods ``retrieve``, ``delete``,
``cancel`` and ``input_items/list``; openai-python ``resources/responses``): retrieve returns the
Response (query ``stream``/``starting_after`` resume a background stream after that
``sequence_number``); delete returns ``{"id":…,"object":"response","deleted":true}``; cancel
returns the Response, "only responses created with the background parameter set to true can be
cancelled"; input_items returns ``{"object":"list","data":[items],"first_id","last_id","has_more"}``
with query ``after`` (an item id), ``limit`` (1-100, default 20) and ``order`` (``asc``/``desc``,
default ``desc``), each item with an ``id`` (a message given as text is an ``input_text`` part).

Not documented, and mockoss's choices: the error bodies (unknown or deleted id: 404 ``Response
with id '<id>' not found.``; cancel of a response made without ``background``: 400 ``Only
responses created with background=true can be cancelled.``; a ``stream=true`` retrieve of a
response that was not a background stream: 400 ``Only background responses can be streamed.``;
a bad ``limit``/``order``: 400 naming it; all ``invalid_request_error``, ``code`` null); ids given
to input items that had none (``msg_`` + 32 hex digits from the response id and position, not
drawn from the server's id sequence, so that create replies keep their bytes). mockoss answers a
``background`` request at once, so a cancel of one returns it as it is (``completed``): the API
returns the final response when the run has ended. A deleted id is no longer continued by
``previous_response_id`` (:data:`DELETED` is kept in its place).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from mockoss.profiles.base import Reply
from mockoss.profiles.openai.wire import dumps, error_reply
from mockoss.profiles.vllm.responses_retrieve import lax_bool, replay_events, sse_events

__all__ = ["DELETED", "MARK", "keep", "stored_route"]

#: The first bytes of a kept entry: then ``response JSON \\0 input items JSON`` and, for a
#: background stream, ``\\0`` + its events joined by ``\\0``.
MARK = b"openai-response\n"
#: What a deleted response's entry holds.
DELETED = b"openai-deleted\n"
_PREFIX = "/v1/responses/"
_ENDS = (b"event: response.completed\n", b"event: response.incomplete\n")
_ROUTES = {"": ("GET", "DELETE"), "cancel": ("POST",), "input_items": ("GET",)}


def keep(body: Any, reply: Reply, kept: Any) -> None:
    """Keep ``reply`` (a create call's 200, official shapes) for the routes above, unless the
    request said ``store: false`` or ``kept`` is ``None``."""
    if (
        kept is None
        or reply.status != 200
        or not isinstance(body, Mapping)
        or lax_bool(body.get("store", True)) is False
    ):
        return
    if reply.streamed:
        events = sse_events(reply.frames)
        ends = [event for event in events if event.startswith(_ENDS)]
        if not ends:
            return
        response = json.loads(ends[-1].split(b"\ndata: ", 1)[1])["response"]
        text = dumps(response).encode()
        extra = b"\0" + b"\0".join(events) if lax_bool(body.get("background")) else b""
    else:
        response, text, extra = json.loads(reply.body), reply.body, b""
    items = dumps(_input_items(response["id"], body.get("input"))).encode()
    kept.put(response["id"], MARK + text + b"\0" + items + extra)


def _input_items(response_id: str, given: Any) -> list[Any]:
    """The request's ``input`` as the API lists it: text is one user message with an
    ``input_text`` part; a message's text content becomes such a part (``output_text`` for an
    assistant's); every item gets an ``id`` if it had none (see the module docstring)."""
    items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    out = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        item = dict(item)
        if item.get("type", "message") == "message":
            item["type"] = "message"
            if isinstance(item.get("content"), str):
                part = "output_text" if item.get("role") == "assistant" else "input_text"
                item["content"] = [{"type": part, "text": item["content"]}]
            item.setdefault("status", "completed")
        if not item.get("id"):
            digest = hashlib.blake2b(f"{response_id}/{index}".encode(), digest_size=16).hexdigest()
            item = {"id": f"msg_{digest}", **item}
        out.append(item)
    return out


def stored_route(profile: Any, method: str, path: str, query: str, kept: Any) -> Reply | None:
    """The answer to one of the routes above (another method on their paths: the profile's
    ``route_error(405, …)``), else ``None``. ``kept``: the server's kept responses, or ``None``."""
    if not path.startswith(_PREFIX):
        return None
    response_id, _, tail = path[len(_PREFIX) :].partition("/")
    if not response_id or tail not in _ROUTES:
        return None
    if method not in _ROUTES[tail]:
        return profile.route_error(405, method, path)  # type: ignore[no-any-return]
    entry = kept.get(response_id) if kept is not None else None
    if entry is None or not entry.startswith(MARK):
        return error_reply(404, f"Response with id '{response_id}' not found.")
    response, items, *events = entry[len(MARK) :].split(b"\0")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if tail == "input_items":
        return _list(json.loads(items), params)
    if tail == "cancel":
        if not lax_bool(json.loads(response).get("background")):
            return error_reply(400, "Only responses created with background=true can be cancelled.")
        return Reply(status=200, body=response)
    if method == "DELETE":
        kept.put(response_id, DELETED)
        return Reply(status=200, body=dumps({"id": response_id, "object": "response", "deleted": True}).encode())
    if lax_bool(params.get("stream", "false")):
        if not events:
            return error_reply(400, "Only background responses can be streamed.", param="stream")
        after = params.get("starting_after")
        if after is not None and not after.lstrip("-").isdigit():
            return error_reply(
                400, f"Invalid 'starting_after': '{after}'. Expected an integer.", param="starting_after"
            )
        return replay_events(response_id, events, None if after is None else int(after))
    return Reply(status=200, body=response)


def _list(items: list[dict[str, Any]], params: dict[str, str]) -> Reply:
    """One page of input items (``order``, ``after``, ``limit``)."""
    order, limit = params.get("order", "desc"), params.get("limit", "20")
    if order not in ("asc", "desc"):
        return error_reply(400, f"Invalid 'order': '{order}'. Expected 'asc' or 'desc'.", param="order")
    if not limit.isdigit() or not 1 <= int(limit) <= 100:
        return error_reply(400, f"Invalid 'limit': '{limit}'. Expected an integer between 1 and 100.", param="limit")
    ordered = items if order == "asc" else items[::-1]
    after = params.get("after")
    if after is not None:
        ids = [item["id"] for item in ordered]
        ordered = ordered[ids.index(after) + 1 :] if after in ids else []
    page = ordered[: int(limit)]
    data = {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(ordered) > len(page),
    }
    return Reply(status=200, body=dumps(data).encode())
