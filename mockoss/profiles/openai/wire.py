"""Official OpenAI wire shapes, made from the vLLM profile's output.

The vLLM profile writes vLLM's objects (extra fields such as ``stop_reason``, ``token_ids``,
``kv_transfer_params``, ``input_messages``; tool-call ids ``chatcmpl-tool-<hex>``; a reasoning item
streamed with a ``msg_`` id; a function-call ``output_item.done`` item with ``"id":null`` and stray
``item_id``/``output_index``/``sequence_number``). This module rewrites them into the objects of the
OpenAI API reference as openai-python 2.x models them: ``chat.completion`` (``message`` with
``role, content, refusal, annotations: [], [tool_calls], reasoning``), ``chat.completion.chunk``
(``id, object, created, model, service_tier, system_fingerprint, choices[, usage]``), tool-call ids
``call_<24 hex>``, ``response`` without vLLM's extras, and error bodies
``{"error":{"message","type","param","code"}}`` with OpenAI's error types.
"""

from __future__ import annotations

from typing import Any

from mockoss.profiles.base import JSON_MEDIA_TYPE, Reply
from mockoss.profiles.wire import dumps, loads

__all__ = ["ResponsesRewrite", "chat_body", "chat_frame", "chat_frames", "dumps", "error_reply", "responses_body", "responses_frames"]

_TOOL_PREFIX = "chatcmpl-tool-"
_DONE = b"data: [DONE]\n\n"
#: HTTP status → OpenAI error ``type``.
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_denied", 404: "invalid_request_error", 409: "conflict", 422: "invalid_request_error", 429: "rate_limit_exceeded"}


def _call_id(vllm_id: str | None) -> str | None:
    if vllm_id is None:
        return None
    return "call_" + vllm_id.removeprefix(_TOOL_PREFIX)[:24]


def _usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    details = usage.get("completion_tokens_details") or {}
    return {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "total_tokens": usage["total_tokens"],
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": details.get("reasoning_tokens", 0),
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        item: dict[str, Any] = {"index": call["index"]} if "index" in call else {}
        if "id" in call:
            item["id"] = _call_id(call["id"])
        if "type" in call:
            item["type"] = call["type"]
        if "function" in call:
            item["function"] = call["function"]
        out.append(item)
    return out


def chat_body(vllm: Reply) -> Reply:
    """A ``chat.completion`` from vLLM's non-streamed chat reply (errors are rewritten too)."""
    data = loads(vllm.body)
    if vllm.status != 200:
        return _error_from_vllm(vllm.status, data)
    choice = data["choices"][0]
    src = choice["message"]
    message: dict[str, Any] = {"role": "assistant", "content": src.get("content"), "refusal": None, "annotations": []}
    if src.get("tool_calls"):
        message["tool_calls"] = _tool_calls(src["tool_calls"])
    message["reasoning"] = src.get("reasoning")
    body = {
        "id": data["id"],
        "object": "chat.completion",
        "created": data["created"],
        "model": data["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": choice["finish_reason"]}],
        "usage": _usage(data.get("usage")),
        "service_tier": "default",
        "system_fingerprint": None,
    }
    return Reply(status=200, body=dumps(body).encode())


def _chunk(data: dict[str, Any], include_usage: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": data["id"],
        "object": "chat.completion.chunk",
        "created": data["created"],
        "model": data["model"],
        "service_tier": "default",
        "system_fingerprint": None,
        "choices": [],
    }
    for choice in data["choices"]:
        delta = dict(choice["delta"])
        if delta.get("role") == "assistant":
            delta = {"role": "assistant", "content": delta.get("content", ""), "refusal": None}
        if "tool_calls" in delta:
            delta["tool_calls"] = _tool_calls(delta["tool_calls"])
        out["choices"].append({"index": 0, "delta": delta, "logprobs": None, "finish_reason": choice.get("finish_reason")})
    if include_usage:
        out["usage"] = _usage(data.get("usage"))
    return out


def chat_frame(frame: bytes, include_usage: bool) -> bytes:
    """One ``chat.completion.chunk`` frame from one frame of vLLM's chat stream (``[DONE]`` as
    is; an error frame in OpenAI's error shape)."""
    if frame == _DONE:
        return frame
    data = loads(frame[6:])
    if "error" in data:
        status = data["error"].get("code") or 500
        return b"data: " + dumps({"error": _error_object(status, data["error"]["message"], None)}).encode() + b"\n\n"
    return b"data: " + dumps(_chunk(data, include_usage)).encode() + b"\n\n"


def chat_frames(vllm: Reply, include_usage: bool) -> Reply:
    """``chat.completion.chunk`` frames from vLLM's chat stream; an error frame keeps its place."""
    frames = [chat_frame(frame, include_usage) for frame in vllm.frames]
    return Reply(status=vllm.status, media_type=vllm.media_type, frames=tuple(frames), abort=vllm.abort)


_RESPONSE_EXTRAS = ("input_messages", "output_messages")
_USAGE_EXTRAS = ("input_tokens_per_turn", "cached_tokens_per_turn", "output_tokens_per_turn", "tool_output_tokens_per_turn", "tool_output_tokens")


def _response(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k not in _RESPONSE_EXTRAS}
    usage = out.get("usage")
    if isinstance(usage, dict):
        usage = {k: (dict(v) if isinstance(v, dict) else v) for k, v in usage.items()}
        for details in (usage.get("input_tokens_details"), usage.get("output_tokens_details")):
            if isinstance(details, dict):
                for key in _USAGE_EXTRAS:
                    details.pop(key, None)
        out["usage"] = usage
    return out


def responses_body(vllm: Reply) -> Reply:
    """A ``response`` object from vLLM's non-streamed Responses reply (errors rewritten too)."""
    data = loads(vllm.body)
    if vllm.status != 200:
        return _error_from_vllm(vllm.status, data)
    return Reply(status=200, body=dumps(_response(data)).encode())


class ResponsesRewrite:
    """The rewrite of vLLM's Responses stream, one frame at a time: reasoning items streamed with
    ``rs_`` ids (every later mention of the ``msg_`` id renamed), no vLLM extras in the response
    objects, function-call items without vLLM's stray fields (``output_item.done``'s ``"id":null``
    filled with the id ``output_item.added`` gave)."""

    __slots__ = ("call_ids", "renamed")

    def __init__(self, renamed: dict[str, str] | None = None, call_ids: dict[int, str] | None = None) -> None:
        self.renamed: dict[str, str] = dict(renamed or {})
        self.call_ids: dict[int, str] = dict(call_ids or {})

    def frame(self, frame: bytes) -> bytes:
        """The rewritten ``frame`` (the state takes what it says about ids)."""
        head, _, payload = frame.decode().partition("data: ")
        data = loads(payload)
        item = data.get("item")
        if isinstance(item, dict):
            if item.get("type") == "reasoning" and str(item.get("id", "")).startswith("msg_"):
                self.renamed[item["id"]] = "rs_" + item["id"][4:]
            if item.get("type") == "function_call":
                item = {k: v for k, v in item.items() if k not in ("item_id", "output_index", "sequence_number")}
                index = data.get("output_index", -1)
                if item.get("id"):
                    self.call_ids[index] = item["id"]
                else:
                    item["id"] = self.call_ids.get(index)
                data["item"] = item
        if isinstance(data.get("response"), dict):
            data["response"] = _response(data["response"])
        text = dumps(data)
        for old, new in self.renamed.items():
            text = text.replace(old, new)
        return f"{head}data: {text}\n\n".encode()


def responses_frames(vllm: Reply) -> Reply:
    """Responses stream events from vLLM's (:class:`ResponsesRewrite`)."""
    rewrite = ResponsesRewrite()
    frames = [rewrite.frame(frame) for frame in vllm.frames]
    return Reply(status=vllm.status, media_type=vllm.media_type, frames=tuple(frames), abort=vllm.abort)


def _error_object(status: int, message: str, param: str | None) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"message": message, "type": kind, "param": param, "code": None}


def error_reply(status: int, message: str, *, param: str | None = None, code: str | None = None) -> Reply:
    """``{"error":{"message","type","param","code"}}`` with status ``status``."""
    error = _error_object(status, message, param)
    error["code"] = code
    return Reply(status=status, media_type=JSON_MEDIA_TYPE, body=dumps({"error": error}).encode())


def _error_from_vllm(status: int, data: dict[str, Any]) -> Reply:
    error = data.get("error") if isinstance(data.get("error"), dict) else data
    return error_reply(status, str(error.get("message", "")), param=error.get("param"))
