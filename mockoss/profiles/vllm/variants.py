"""Dated vLLM profiles: views of the vLLM timeline (:mod:`mockoss.profiles.vllm.releases`).

The names predate the timeline and keep working:

* ``vllm-2025`` = ``vllm@0.11.0`` (the v0.10.2–v0.11.x line, Sep–Nov 2025): ``OpenAIToolParser``
  chat path and inline stream rules (``serving_chat.py@003fe593``), ``reasoning_content`` (before
  PR #27752), nested error bodies (PR #22099), Responses items of
  ``harmony_utils.parse_output_message`` (no recipient normalisation), ``token_ids`` fields
  (PR #22587). PR #25514's duplicate content: switch ``tool_call_in_content``.
* ``vllm-0.10.1`` = ``vllm@0.10.1+gptoss``, the August 2025 gpt-oss launch build: no chat tool
  support, ``Expected 2 output messages (reasoning and final), but got N.`` (vllm-project/vllm#22403,
  #22879) as HTTP 400 in the flat ``{"object":"error",…}`` body users reported
  (infiniflow/ragflow#9432, openai/openai-agents-python#1468), no ``token_ids`` fields, and a
  Responses stream without function-call events (vllm-project/vllm#24076).

``mockoss profiles --timeline vllm`` lists what differs between them and the newest release.
"""

from __future__ import annotations

from collections.abc import Mapping

from mockoss.profiles.releases import at_release
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.releases import VLLM_TIMELINE

__all__ = ["VLLM_VARIANTS"]

#: Registry name → dated profile (a release of the vLLM timeline under its older name).
VLLM_VARIANTS: Mapping[str, VllmProfile] = {
    alias: at_release(VllmProfile(), release, name=alias) for alias, release in VLLM_TIMELINE.aliases.items()
}
