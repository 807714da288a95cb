"""Request bodies rendered as the Harmony prompt vLLM feeds gpt-oss, for realistic ``prompt_tokens``.

Both entry points take the validated JSON body of a request as plain dicts and return the prompt's
token ids (o200k_harmony), ending with ``<|start|>assistant``. Rendering is openai-harmony's own
(``Conversation.from_messages`` then ``render_conversation_for_completion(conv, Role.ASSISTANT)``
with its default config); this module only decides *which* Harmony messages vLLM builds.

vLLM sources reproduced (vllm-project/vllm; read for facts, no code copied):

* ``vllm/entrypoints/openai/parser/harmony_utils.py``, the version that has ``build_harmony_preamble``,
  ``extract_instructions_from_messages`` and ``get_system_or_developer_message`` (introduced by
  PR #44330, merged 2026-06-02; the index that served the file could not name its commit). Its
  ``get_system_message`` / ``get_developer_message`` / ``parse_chat_input_to_harmony_message`` match
  ``harmony_utils.py@0142105b`` apart from the system/developer handling.
* ``vllm/entrypoints/openai/responses/harmony.py@2506874329a0`` (``response_input_to_harmony``).
* The renderer that calls them (``_make_request_with_harmony`` for chat,
  ``_render_responses_with_harmony`` for Responses; the successor of
  ``vllm/entrypoints/serve/render/serving.py@9f0eedbc``, commit not resolvable either).
* Built-in tool descriptions: vLLM's ``DemoToolServer`` returns openai-harmony's
  ``ToolNamespaceConfig.browser()`` / ``.python()`` and nothing for ``container``.

What vLLM renders (and so do we):

* System message: ``SystemContent.new()`` (model identity "You are ChatGPT, a large language model
  trained by OpenAI.", knowledge cutoff 2024-06, all three channels) with the conversation start
  date, ``Reasoning: {effort}`` (``medium`` unless the request says ``low``/``medium``/``high``) and,
  for Responses only, the built-in tool namespaces.
* Developer message, only when there are instructions or tools: ``# Instructions`` then the
  ``functions`` namespace of the request's function tools.
* Conversation turns, then ``<|start|>assistant``.
* Assistant tool-call headers in the legacy shape ``<|start|>assistant to=functions.f<|channel|>commentary
  json<|message|>``: vLLM 0.32/0.33 rewrite oss-harmony's ``…<|channel|>commentary to=functions.f
  <|constrain|>json…`` so (``_use_legacy_tool_call_headers``,
  vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/parser/harmony_utils.py).
* Responses: vLLM's ``previous_input_messages`` (its ``construct_harmony_previous_input_messages``),
  and, for chat and Responses alike, every analysis message before the last assistant final one
  dropped (``render_for_completion``).

Assistant ``reasoning_content`` is read when ``reasoning`` is absent: vLLM's converter reads only
``reasoning``; whether its request layer still maps the older name onto it is unverified.

Other vLLM versions differ: ``harmony_utils.py@6a22fe6f`` removed ``commentary`` from the valid
channels when the request had no function tools and rendered a chat system message as a second,
raw ``<|start|>system`` message (chat serving then also always added a developer message);
``harmony_utils.py@0142105b`` drops analysis messages only within the current turn (after the last
user message).

Deviations, all for inputs vLLM rejects (HTTP 400/500) rather than renders; this module never raises:
unknown roles and item types are skipped, a reasoning effort vLLM rejects (``"none"``,
``"minimal"``…) renders as the default, unsupported tool types are left out, a
``function_call_output`` whose ``call_id`` matches no earlier ``function_call`` gets the empty tool
name, non-string values are stringified (JSON for objects), and strings vLLM's renderer cannot encode
(lone surrogates, NaN in a schema) are repaired.
"""

from mockoss.harmony.prompt._common import DEFAULT_CONVERSATION_START_DATE
from mockoss.harmony.prompt.chat import render_chat_prompt
from mockoss.harmony.prompt.responses import render_responses_prompt

__all__ = ["DEFAULT_CONVERSATION_START_DATE", "render_chat_prompt", "render_responses_prompt"]
