"""``POST /v1/chat/completions`` as vllm-mlx serves gpt-oss (waybarrios/vllm-mlx@v0.6.0).

The engine (``engine/simple.py``, ``models/llm.py`` over ``mlx_lm.stream_generate`` 0.31) is
emulated by :func:`mockoss.profiles.vllm_mlx.engine.engine_outputs`; ``server.py``
(``create_chat_completion``, ``_extract_reasoning_and_tool_calls``,
``_parse_tool_calls_with_parser``) by :func:`surface_chat`, ``stream_chat_completion`` by
:mod:`.stream`. Rules:

* Text is mlx-lm's streaming detokenizer output: Harmony markup kept as text; the EOS tokens
  (``<|return|>``, ``<|call|>``, ``<|endoftext|>``) end generation undecoded, so a call never ends
  in ``<|call|>`` in the text the parsers see.
* Non-streamed, the engine runs ``clean_output_text`` *before* the parsers: with a final channel
  only the final text is left (no ``reasoning_content``); without one, channel headers go but
  analysis text, ``<|end|>`` and call arguments stay and become ``content``: a tool call is never
  found (the state after waybarrios/vllm-mlx#562, whose engine-side bypass was removed in review).
  Without tools ``completion_tokens`` is the re-encoded text's length and ``finish_reason`` is
  ``length`` when that reaches ``max_tokens``; with tools it is the streamed count (below).
* Streamed: one engine output per mlx-lm response (one per token, one more for the flush, one
  more ``finished`` output when the generator ends on an EOS), so ``completion_tokens`` counts the
  stop token, and a completion that stops exactly one token short of ``max_tokens`` says
  ``length``. The reasoning parser sees every delta; its content goes to the tool parser; chunks
  come out even with an empty delta (``"delta":{}``); a call is one delta with the whole call;
  the finish chunk carries ``usage``; ``stream_options.include_usage`` adds a ``choices: []``
  usage chunk; ``data: [DONE]``.
* Bodies are pydantic's compact JSON (``ensure_ascii=False``); ``id`` is ``chatcmpl-`` + 8 hex
  digits, call ids ``call_`` + 8; ``model`` is the served name; ``generation_metadata: null``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.vllm_mlx import cached
from mockoss.profiles.vllm_mlx import parsers as p
from mockoss.profiles.vllm_mlx.engine import coerce_arguments, usage
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["extract_reasoning_and_calls", "surface_chat"]

def _tools(profile: VllmMlxProfile, request: ChatRequestView) -> list[dict] | None:
    body = request.body if isinstance(request.body, dict) else {}
    tools = body.get("tools")
    return tools if tools else None


def surface_chat(profile: VllmMlxProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext, model: str) -> Reply:
    """vllm-mlx's chat reply for ``completion`` (see the module docstring)."""
    limit = request.max_tokens or profile.max_tokens
    rid = "chatcmpl-" + ctx.ids.next()[:8]
    tools = _tools(profile, request) if request.tool_choice != "none" else None
    declared = _tools(profile, request)
    if request.stream:
        frames = cached.chat_stream(profile, completion, limit, request, ctx, rid, model, tools, declared)
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
    _raw, finish, count, text = cached.generated_text(completion, limit, bool(tools))  # tools reach the engine unless tool_choice "none"

    def parts() -> tuple[str | None, str | None, list]:
        reasoning, content, calls = _extract(profile, text, declared, tools)
        return reasoning, p.clean_output_text(content) if content else None, calls

    # The parsers depend on whether tools are declared and reach them, not on the tools themselves.
    key = ("vllm_mlx.chat.parts", cached.limit_key(completion, limit), tools is None, bool(declared), profile)
    reasoning, content, calls = cached.memoised(completion, key, parts)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [{"id": "call_" + ctx.ids.next()[:8], "type": "function", "function": {"name": c.name, "arguments": coerce_arguments(c.arguments, c.name, declared) if c.coerce else c.arguments}} for c in calls]
    body = {
        "id": rid, "object": "chat.completion", "created": ctx.created, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else finish}],
        "usage": usage(ctx.prompt_tokens, count),
    }
    if profile.body_generation_metadata:
        body["generation_metadata"] = None
    return Reply(status=200, body=dumps(body).encode())


def _extract(profile: VllmMlxProfile, text: str, declared: list | None, tools: list | None) -> tuple[str | None, str | None, list]:
    """The server's extraction with the profile's parsers (the generic fallback parser, tried when
    the Harmony parser finds nothing, is not reproduced)."""
    extract = p.REASONING_PARSERS[profile.reasoning_parser][0] if profile.reasoning_parser is not None else None
    parse = None
    if tools is not None:  # no --tool-call-parser: vllm-mlx's generic parser alone
        def parse(text: str) -> tuple[list, str]:
            return p.tool_calls_with_fallback(text, fixed=profile.harmony_call_fix, harmony=profile.tool_call_parser is not None)
    return extract_reasoning_and_calls(text, extract, parse, declared=bool(declared), strip_analysis=profile.harmony_call_fix)


def extract_reasoning_and_calls(
    text: str, reasoning_extract: Any, tool_parse: Any, *, declared: bool, strip_analysis: bool = True
) -> tuple[str | None, str | None, list]:
    """``server.py`` ``_extract_reasoning_and_tool_calls``: ``(reasoning, content, calls)``.

    ``reasoning_extract(text) -> (reasoning, content)`` is the reasoning parser or ``None``;
    ``tool_parse(text) -> (calls, content)`` the tool parser, ``None`` when it does not run (no
    tools, ``tool_choice: "none"``, no parser). When the reasoning parser finds reasoning but no
    content, the tool parser gets the text with the analysis blocks removed if tools are declared
    (``""`` otherwise, and always before 0.4.1: ``strip_analysis=False``).
    """
    reasoning, for_tools = None, text
    if reasoning_extract is not None:
        reasoning, cleaned = reasoning_extract(text)
        if cleaned is not None:
            for_tools = cleaned
        elif reasoning is not None:
            for_tools = p.strip_analysis_blocks(text) if declared and strip_analysis else ""
    if not declared or tool_parse is None:
        return reasoning, for_tools, []
    calls, content = tool_parse(for_tools or "")
    return reasoning, content, calls
