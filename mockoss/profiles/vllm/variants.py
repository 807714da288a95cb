"""Dated vLLM profiles: :class:`~mockoss.profiles.vllm.VllmProfile` with the switches of a release.

* ``vllm-2025``: v0.10.2–v0.11.x (Sep–Nov 2025) with ``--tool-call-parser openai
  --reasoning-parser openai_gptoss --enable-auto-tool-choice``: ``OpenAIToolParser`` chat path and
  inline stream rules (``serving_chat.py@003fe593``), ``reasoning_content`` (before PR #27752),
  nested error bodies (PR #22099 shipped in v0.10.1), Responses items of
  ``harmony_utils.parse_output_message`` (no recipient normalisation), ``token_ids`` fields
  (PR #22587). A ``HarmonyError`` is HTTP 500 ``Internal Server Error`` non-streamed and a 400
  ``BadRequestError`` chunk streamed. PR #25514's duplicate content: switch
  ``tool_call_in_content``.
* ``vllm-0.10.1``: the August 2025 gpt-oss launch build (``0.10.1+gptoss``): no chat tool
  support, ``Expected 2 output messages (reasoning and final), but got N.`` (vllm-project/vllm#22403,
  #22879) as HTTP 400 in the flat ``{"object":"error",…}`` body users reported
  (infiniflow/ragflow#9432, openai/openai-agents-python#1468), no ``token_ids`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping

from mockoss.profiles.vllm import VllmProfile

__all__ = ["VLLM_VARIANTS"]

VLLM_2025 = VllmProfile(
    name="vllm-2025",
    chat_parser="openai_tool_parser",
    chat_stream="inline",
    reasoning_field="reasoning_content",
    responses_mapping="2025",
)

VLLM_0_10_1 = VllmProfile(
    name="vllm-0.10.1",
    chat_parser="reasoning_and_final",
    reasoning_field="reasoning_content",
    error_body="flat",
    token_ids_fields=False,
    responses_mapping="2025",
)

#: Registry name → dated profile.
VLLM_VARIANTS: Mapping[str, VllmProfile] = {p.name: p for p in (VLLM_2025, VLLM_0_10_1)}
