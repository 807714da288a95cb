"""Profile ``vllm``: how vLLM's OpenAI-compatible server surfaces gpt-oss output.

Switches reproduce behaviours that vLLM changed over time, so a test can run one completion
"before" and "after" a fix.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, Reply, RequestContext, ResponsesRequestView, ServerInfo
from mockoss.profiles.vllm.errors import error_reply

__all__ = ["VllmProfile"]


@dataclass(frozen=True, slots=True)
class VllmProfile:
    """Current (2026) vLLM with ``--tool-call-parser openai --reasoning-parser openai_gptoss
    --enable-auto-tool-choice``.

    Attributes:
        strict: openai-harmony ``StreamableParser(strict=…)``; vLLM uses strict.
        harmony_error_status: HTTP status of a ``HarmonyError``: 500 in current vLLM (it no longer
            maps ``RuntimeError`` to ``BadRequestError``, vllm-project/vllm#51977), 400 in the
            earlier 2026 releases that did.
        responses_ignore_recipients_without_tools: when a Responses request declares no tools,
            classify output by channel and ignore Harmony recipients, as the fix proposed in
            "[Bugfix][Responses] Ignore Harmony recipients when no tools are configured" does.
            Off by default: shipped vLLM turns any such recipient into an ``mcp_call``.
        enable_auto_tool_choice: ``--enable-auto-tool-choice``; without it, parsed tool calls are
            dropped from chat output unless ``tool_choice`` names a function or is ``required``.
        responses_stream_error: what a Responses stream does when the parser fails after HTTP 200.
            ``"cut"`` (vLLM as read: ``responses_stream_generator`` catches only
            ``GenerationError``, so the connection drops after the events so far) or
            ``"error_event"`` (an OpenAI-style ``error`` event; unverified, for clients that
            expect one).
        max_model_len: ``--max-model-len`` in tokens; ``/v1/models`` reports it and Responses
            caps ``max_output_tokens`` at ``max_model_len - prompt_tokens``.
    """

    name: str = "vllm"
    endpoints: frozenset[str] = frozenset({"chat", "responses"})
    strict: bool = True
    harmony_error_status: Literal[400, 500] = 500
    responses_ignore_recipients_without_tools: bool = False
    enable_auto_tool_choice: bool = True
    responses_stream_error: Literal["cut", "error_event"] = "cut"
    max_model_len: int = 131072

    def __post_init__(self) -> None:
        if self.harmony_error_status not in (400, 500):
            raise ValueError(f"harmony_error_status must be 400 or 500, got {self.harmony_error_status!r}")
        if self.responses_stream_error not in ("cut", "error_event"):
            raise ValueError(f"responses_stream_error must be 'cut' or 'error_event', got {self.responses_stream_error!r}")
        for switch in ("strict", "responses_ignore_recipients_without_tools", "enable_auto_tool_choice"):
            if not isinstance(getattr(self, switch), bool):
                raise ValueError(f"{switch} must be true or false, got {getattr(self, switch)!r}")
        if not isinstance(self.max_model_len, int) or self.max_model_len < 1:
            raise ValueError(f"max_model_len must be a positive integer, got {self.max_model_len!r}")

    def with_switches(self, **switches: Any) -> VllmProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def surface(self, endpoint: str, completion: Completion, request: Any, ctx: RequestContext) -> Reply:
        """Dispatch to :meth:`chat` or :meth:`responses`."""
        if endpoint == "chat":
            return self.chat(completion, request, ctx)
        if endpoint == "responses":
            return self.responses(completion, request, ctx)
        raise ValueError(f"profile vllm does not serve endpoint {endpoint!r}")

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/chat/completions``; see :func:`mockoss.profiles.vllm.chat.surface_chat`."""
        from mockoss.profiles.vllm.chat import surface_chat

        return surface_chat(self, completion, request, ctx)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        """``POST /v1/responses``; see :func:`mockoss.profiles.vllm.responses.surface_responses`."""
        from mockoss.profiles.vllm.responses import surface_responses

        return surface_responses(self, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        """vLLM's ``ErrorResponse`` body with ``status``."""
        return error_reply(status, message, param=param)

    def model_not_found(self, model: str) -> Reply:
        """vLLM's ``_check_model``: 404 ``The model `X` does not exist.``, param ``model``."""
        return error_reply(404, f"The model `{model}` does not exist.", param="model")

    def probe(self, method: str, path: str, info: ServerInfo) -> Reply | None:
        """``GET /v1/models`` (vLLM's ``ModelList``) and ``GET /health`` (200, empty body)."""
        if method != "GET":
            return None
        if path == "/health":
            return Reply(status=200, body=b"")
        if path == "/v1/models":
            return self._models(info)
        return None

    def route_error(self, status: int, method: str, path: str) -> Reply:
        """FastAPI's default body, which vLLM's server returns: ``{"detail":"Not Found"}``."""
        detail = "Not Found" if status == 404 else "Method Not Allowed"
        return Reply(status=status, body=json.dumps({"detail": detail}, separators=(",", ":")).encode())

    def _models(self, info: ServerInfo) -> Reply:
        names = info.served_model_names
        data = [
            {
                "id": name,
                "object": "model",
                "created": info.created,
                "owned_by": "vllm",
                "root": names[0],
                "parent": None,
                "max_model_len": self.max_model_len,
            }
            for name in names
        ]
        return Reply(status=200, body=json.dumps({"object": "list", "data": data}, separators=(",", ":")).encode())
