"""``POST /v1/responses`` as ``trtllm-serve`` answers for gpt-oss.

Read from NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:tensorrt_llm/serve/responses_utils.py
(the version whose ``process_streaming_events(request, sampling_params, generator, harmony_adapter, …)``
matches the ``openai_server.py`` the chat route was read from; autumn 2025:
``parse_output_message``, ``create_response``, ``process_streaming_events``,
``finish_reason_mapping``, ``request_preprocess``) and ``openai_protocol.py``
(``ResponsesRequest``, ``ResponsesResponse.from_request``). The later rewrites of this endpoint
(a streaming processor class, usage, more stop tokens: NVIDIA/TensorRT-LLM#10651) are not
emulated; the endpoint answers as that version whatever the profile's release.

* Output: openai-harmony's ``parse_messages_from_completion_tokens`` on the output tokens (no
  stripping, no recovery: a ``HarmonyError`` is a 400). Per message: analysis → a ``reasoning`` item
  per content; commentary without recipient → nothing (a preamble vanishes); ``functions.X`` →
  ``function_call`` (name after the last ``.``, ``call_``/``fc_`` sharing 32 hex digits), also on
  analysis only for ``browser.*``; ``python``/``browser`` on commentary → ``reasoning``; another
  recipient → 400 ``Unknown recipient``; ``browser.*`` → ``web_search_call`` with ``cursor:``
  URLs; final → ``message``; a tool-role message → nothing. ``usage`` is null; ``status`` is
  ``completed`` or ``incomplete`` (``length``); ``max_output_tokens`` defaults to 16384.
* Stream: ``response.created`` and ``response.in_progress`` with sequence numbers from 0, then per
  engine response only the *last* token's content delta (``stream_interval`` > 1 loses text), every
  item id ``""``, content part ``output_text`` even for reasoning, done events only when a message
  ends with ``<|end|>`` and with the output index already advanced (the last message, ended by a
  stop token that is not output, gets none; calls get none), the engine's last (empty) response
  repeating the last delta (and the last done events, when the output ended in ``<|end|>``), then
  ``response.completed`` with the non-streamed response. A parse error there aborts the stream after HTTP 200.
* Field sets: the body as TensorRT-LLM's ``ResponsesResponse`` dumps it; items and the response
  inside events (``created_at`` a float there) as openai-python 2.6.1 dumps them (which version
  the server ran is not known).

Checked by running that ``responses_utils.py`` (with the adapter, openai-harmony 0.0.4 and
openai 2.6.1; runtime and protocol stubbed): ``tools/trtllm_responses_diff.py``, 4,212 replies
(2,808 streamed) from the scenario and seeded completions, 0 differ byte for byte (ids and times
normalised). Not checked: the route's ``except`` clause (read up to its cut: assumed
``create_error_response(str(e))``, a 400), which the error status and type rest on. A ``previous_response_id`` not starting ``resp_`` is the server's 400; one it
  did not store its 404, and a ``function_call_output`` without its call its 400
  (:mod:`mockoss.profiles.trtllm.responses_input`; the store on, as by default). With the store
  on, a 200's response (a stream's in the non-streamed body's shape) is kept for ``GET``/``DELETE
  /v1/responses/{id}`` unless the request said ``store: false`` (:mod:`mockoss.profiles.trtllm.stored`).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openai_harmony import Message, StreamState

from mockoss.harmony.library import parse_with
from mockoss.profiles.base import SSE_MEDIA_TYPE, IdSource, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.replay import IdRecorder, Template, templatable
from mockoss.profiles.trtllm.chat import engine_batches, fed_batches, output_tokens
from mockoss.profiles.trtllm.responses_input import responses_input_error
from mockoss.profiles.trtllm.stored import keep
from mockoss.profiles.web_search import web_search_item
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["surface_responses"]

DEFAULT_MAX_TOKENS = 16384
#: openai-python 2.x's ``Response`` fields, in order (the response inside stream events).
_SDK_RESPONSE = (
    "id", "created_at", "error", "incomplete_details", "instructions", "metadata", "model", "object", "output",
    "parallel_tool_calls", "temperature", "tool_choice", "tools", "top_p", "background", "conversation", "max_output_tokens",
    "max_tool_calls", "previous_response_id", "prompt", "prompt_cache_key", "reasoning", "safety_identifier", "service_tier",
    "status", "text", "top_logprobs", "truncation", "usage", "user",
)


_REMAINING = "unexpected tokens remaining in message header: "


def _wording(error: str, library: str) -> str:
    """A ``HarmonyError`` as the server's library words it. openai-harmony 0.0.4 (measured; 0.0.8
    assumed alike) lists a header's leftover words, ``["to=x", "code"]``; oss-harmony, whose text
    the trace holds, writes ``Some("to=x code")``."""
    if library == "oss-harmony" or not (error.startswith(_REMAINING + 'Some("') and error.endswith('")')):
        return error
    try:
        leftover = json.loads(error[len(_REMAINING) + 5 : -1])
    except ValueError:
        return error
    return _REMAINING + "[" + ", ".join(json.dumps(word, ensure_ascii=False) for word in leftover.split()) + "]"


class _OutputError(ValueError):
    """``parse_output_message`` raised: the server's 400 carries ``str(exc)``."""


def _reasoning(text: str, item_id: str, status: str | None = None) -> dict[str, Any]:
    return {"id": item_id, "summary": [], "type": "reasoning", "content": [{"text": text, "type": "reasoning_text"}], "encrypted_content": None, "status": status}


def _text_part(text: str, logprobs: Any = None) -> dict[str, Any]:
    return {"annotations": [], "text": text, "type": "output_text", "logprobs": logprobs}


def _items(message: Message, ids: IdSource) -> list[dict[str, Any]]:
    """``parse_output_message``."""
    if message.author.role != "assistant":
        return []
    recipient, texts = message.recipient, [getattr(part, "text", str(part)) for part in message.content]
    if recipient is not None and recipient.startswith("browser."):
        return [web_search_item(recipient, texts, ids, _OutputError)]
    if message.channel == "analysis":
        return [_reasoning(text, ids.next("rs_")) for text in texts]
    if message.channel == "commentary":
        if recipient is None:
            return []
        if recipient.startswith("functions."):
            out = []
            for text in texts:
                hex_id = ids.next()
                out.append({"arguments": text, "call_id": f"call_{hex_id}", "name": recipient.split(".")[-1], "type": "function_call", "id": f"fc_{hex_id}", "status": None})
            return out
        if recipient.startswith(("python", "browser")):
            return [_reasoning(text, ids.next("rs_")) for text in texts]
        raise _OutputError(f"Unknown recipient: {recipient}")
    if message.channel == "final":
        return [{"id": ids.next("msg_"), "content": [_text_part(t) for t in texts], "role": "assistant", "status": "completed", "type": "message"}]
    raise _OutputError(f"Unknown channel: {message.channel}")


def _echo_tool(tool: Any) -> Any:
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return tool
    return {"name": tool.get("name"), "parameters": tool.get("parameters"), "strict": tool.get("strict"), "type": "function", "description": tool.get("description")}


def _response(request: ResponsesRequestView, rid: str, created: int, output: list[Any], status: str) -> dict[str, Any]:
    """``ResponsesResponse.from_request(...)`` as TensorRT-LLM's model dumps it."""
    body = request.body if isinstance(request.body, Mapping) else {}
    limit = request.max_output_tokens
    return {
        "id": rid, "created_at": created, "instructions": body.get("instructions"), "metadata": body.get("metadata"),
        "model": request.model, "object": "response", "output": output, "parallel_tool_calls": bool(body.get("parallel_tool_calls", False)),
        "temperature": 1.0 if body.get("temperature") is None else body["temperature"],
        "tool_choice": body.get("tool_choice", "auto"), "tools": [_echo_tool(t) for t in body.get("tools") or ()],
        "top_p": 1.0 if body.get("top_p") is None else body["top_p"], "background": bool(body.get("background", False)),
        "max_output_tokens": DEFAULT_MAX_TOKENS if limit is None else min(limit, DEFAULT_MAX_TOKENS),
        "max_tool_calls": body.get("max_tool_calls"), "previous_response_id": body.get("previous_response_id"), "prompt": None,
        "reasoning": body.get("reasoning"), "service_tier": body.get("service_tier", "auto"), "status": status, "text": body.get("text"),
        "top_logprobs": body.get("top_logprobs") or 0, "truncation": body.get("truncation") or "disabled", "usage": None, "user": body.get("user"),
    }


def _sdk(response: dict[str, Any]) -> dict[str, Any]:
    """The response as the openai ``Response`` model inside an event dumps it (``created_at`` is
    a float there)."""
    out = {key: response.get(key, "response" if key == "object" else None) for key in _SDK_RESPONSE}
    out["created_at"] = float(out["created_at"])
    return out


def _spliced(response: dict[str, Any], output: str) -> str:
    """``dumps(response)`` with ``output`` (JSON text) as its ``output``: the fields before and
    after it dumped on their own (request fields never go through a template)."""
    keys = list(response)
    at = keys.index("output")  # never the first or the last field
    head = dumps({key: response[key] for key in keys[:at]})
    tail = dumps({key: response[key] for key in keys[at + 1 :]})
    return f'{head[:-1]},"output":{output},{tail[1:]}'


def _output(profile: TrtllmProfile, completion: Completion, limit: int, ids: IdSource | IdRecorder) -> tuple[str, str | None, str]:
    """``(status, error, output JSON)``: the response's status, the error text that replaces the
    response (a ``HarmonyError`` or ``parse_output_message``'s ``ValueError``; then the output is
    ``""``), and its output items as JSON, ids asked of ``ids``."""
    emission = completion.emit(limit)
    tokens, _ = output_tokens(emission.tokens, emission.finish_reason)
    status = "completed" if emission.finish_reason == "stop" else "incomplete"
    trace = parse_with(tokens, strict=True, library=profile.harmony_library)  # type: ignore[arg-type]
    error = trace.error or trace.eos_error or (None if tokens else "Unexpected EOS while waiting for message header to complete")
    if error is not None:
        return status, _wording(error, profile.harmony_library), ""
    try:
        output = [item for message in (*trace.messages, *trace.eos_messages) for item in _items(message, ids)]  # type: ignore[arg-type]
    except _OutputError as exc:
        return status, str(exc), ""
    return status, None, dumps(output)


def surface_responses(profile: TrtllmProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
    """trtllm-serve's Responses reply; see the module docstring.

    The output items (their parse and text) and the stream's events between ``response.in_progress``
    and ``response.completed`` depend only on the completion, the library, ``stream_interval`` and
    the effective limit: memoised on the completion (:mod:`mockoss.profiles.replay`); a request fills in its ids
    and writes the fields it echoes."""
    previous = request.body.get("previous_response_id") if isinstance(request.body, Mapping) else None
    if profile.responses_store and isinstance(previous, str) and not previous.startswith("resp_"):  # store off: not looked at
        return profile.error(400, f"Invalid 'response_id': '{previous}'. Expected an ID that begins with 'resp'.", kind="InvalidRequestError")
    if isinstance(request.body, Mapping) and (refused := responses_input_error(profile, request.body, store=profile.responses_store, kept=ctx.kept)) is not None:
        return refused
    limit = DEFAULT_MAX_TOKENS if request.max_output_tokens is None else min(request.max_output_tokens, DEFAULT_MAX_TOKENS)
    rid = ctx.ids.next("resp_")
    if templatable(completion.text):
        key = ("trtllm.responses", profile.harmony_library, completion.cap(limit))
        cached = completion._memo.get(key)
        if cached is None:
            recorder = IdRecorder()
            status, error, output = _output(profile, completion, limit, recorder)
            cached = (status, error, Template(output), recorder.frozen())
            completion._memo[key] = cached
        status, error, template, calls = cached  # type: ignore[misc]
        output = "" if error is not None else template.fill(IdRecorder.replay(calls, ctx.ids)).decode()
    else:
        status, error, output = _output(profile, completion, limit, ctx.ids)
    storing = profile.responses_store and ctx.kept is not None
    body = None if error is not None or (request.stream and not storing) else _spliced(_response(request, rid, ctx.created, [], status), output).encode()
    if body is not None and storing:  # create_response stores the ResponsesResponse, streamed or not
        keep(request.body, rid, body, ctx.kept)
    if not request.stream:
        if error is not None:
            return profile.error(400, error)
        return Reply(status=200, body=body)  # type: ignore[arg-type]  # made above when not streamed
    return _stream(profile, completion, request, rid, ctx, limit, error if error is not None else (status, output))


def _stream(
    profile: TrtllmProfile, completion: Completion, request: ResponsesRequestView, rid: str, ctx: RequestContext, limit: int,
    final: tuple[str, str] | str,
) -> Reply:
    """``process_streaming_events``: ``final`` is ``(status, output JSON)`` or the error text."""
    frames = []
    for number, kind in enumerate(("response.created", "response.in_progress")):
        event = {"response": _sdk(_response(request, rid, ctx.created, [], "in_progress")), "sequence_number": number, "type": kind}
        frames.append(f"event: {kind}\ndata: {dumps(event)}\n\n".encode())
    frames += _events(profile, completion, limit)
    if isinstance(final, str):
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames), abort=f"HarmonyError or ValueError in create_response: {final}")
    status, output = final
    response = _spliced(_sdk(_response(request, rid, ctx.created, [], status)), output)
    frames.append(f'event: response.completed\ndata: {{"response":{response},"sequence_number":{len(frames)},"type":"response.completed"}}\n\n'.encode())
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _events(profile: TrtllmProfile, completion: Completion, limit: int) -> tuple[bytes, ...]:
    """The events after ``response.in_progress`` up to ``response.completed`` (sequence numbers
    from 2): they hold no id and nothing of the request, so they are memoised per completion,
    library, ``stream_interval`` and effective limit."""
    key = ("trtllm.responses.events", profile.harmony_library, profile.stream_interval, completion.cap(limit))
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    frames: list[bytes] = []

    def send(kind: str, **fields: Any) -> None:
        # the openai event models declare their fields in alphabetical order
        event = {**fields, "sequence_number": len(frames) + 2, "type": kind}
        frames.append(f"event: {kind}\ndata: {dumps({k: event[k] for k in sorted(event)})}\n\n".encode())

    emission = completion.emit(limit)
    tokens, _ = output_tokens(emission.tokens, emission.finish_reason)
    bounds = engine_batches(len(emission.tokens), len(tokens), profile.stream_interval)
    trace, spans = fed_batches(tokens, bounds, profile.harmony_library)
    ended = [i for i, step in enumerate(trace.steps) if step.completed is not None]  # the steps that complete a message
    output_index, added = 0, False
    for start, stop, failed in spans:
        # the parser after the batch: an empty batch (the engine's last response) leaves it, and
        # its last_content_delta, as the previous token left them, so that delta is sent again
        last = trace.steps[stop - 1] if stop > 0 else None
        end = trace.steps[stop] if failed else last
        state = end.state if end is not None else None
        done = 0 if failed else bisect.bisect_left(ended, stop)  # len(parser.messages) after the batch
        if state == StreamState.EXPECT_START:
            output_index, added = output_index + 1, False
            if done:
                _done(send, trace.steps[ended[done - 1]].completed, output_index)
        if last is None or failed or not last.delta or last.recipient is not None:
            continue
        if last.channel == "final":
            if not added:
                added = True
                send("response.output_item.added", item={"id": "", "content": [], "role": "assistant", "status": "in_progress", "type": "message"}, output_index=output_index)
                send("response.content_part.added", content_index=0, item_id="", output_index=output_index, part=_text_part("", []))
            send("response.output_text.delta", content_index=0, delta=last.delta, item_id="", logprobs=[], output_index=output_index)
        elif last.channel == "analysis":
            if not added:
                added = True
                send("response.output_item.added", item={"id": "", "summary": [], "type": "reasoning", "content": None, "encrypted_content": None, "status": "in_progress"}, output_index=output_index)
                send("response.content_part.added", content_index=0, item_id="", output_index=output_index, part=_text_part("", []))
            send("response.reasoning_text.delta", content_index=0, delta=last.delta, item_id="", output_index=output_index)
    result = tuple(frames)
    completion._memo[key] = result
    return result


def _done(send: Any, message: Message, output_index: int) -> None:
    """The done events for the message just closed by ``<|end|>`` (analysis or final only)."""
    if message.recipient is not None or not message.content:
        return
    text = getattr(message.content[0], "text", "")
    if message.channel == "analysis":
        send("response.reasoning_text.done", content_index=0, item_id="", output_index=output_index, text=text)
        send("response.output_item.done", item=_reasoning(text, "", "completed"), output_index=output_index)
    elif message.channel == "final":
        part = _text_part(text)
        send("response.output_text.done", content_index=0, item_id="", logprobs=[], output_index=output_index, text=text)
        send("response.content_part.done", content_index=0, item_id="", output_index=output_index, part=part)
        send("response.output_item.done", item={"id": "", "content": [part], "role": "assistant", "status": "completed", "type": "message"}, output_index=output_index)
