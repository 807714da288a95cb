"""Profile ``vllm``: how vLLM's OpenAI-compatible server surfaces gpt-oss output.

Switches reproduce behaviours that vLLM changed over time, so a test can run one completion
"before" and "after" a fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, Reply, RequestContext, ResponsesRequestView
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
    """

    name: str = "vllm"
    strict: bool = True
    harmony_error_status: Literal[400, 500] = 500
    responses_ignore_recipients_without_tools: bool = False
    enable_auto_tool_choice: bool = True

    def with_switches(self, **switches: Any) -> VllmProfile:
        """Return a copy with some switches changed.

        Raises:
            TypeError: a name that is not a switch of this profile.
        """
        return dataclasses.replace(self, **switches)

    def chat(self, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
        from mockoss.profiles.vllm.chat import surface_chat

        return surface_chat(self, completion, request, ctx)

    def responses(self, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
        from mockoss.profiles.vllm.responses import surface_responses

        return surface_responses(self, completion, request, ctx)

    def error(self, status: int, message: str, *, param: str | None = None) -> Reply:
        return error_reply(status, message, param=param)
