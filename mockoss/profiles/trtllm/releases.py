"""TensorRT-LLM's gpt-oss timeline: the changes of the ``trtllm`` profile's switches.

TensorRT-LLM's release branches could not be read here (its repository is over ``fetch``'s size
limit; its wheels are not on the package index), so which release first shipped each change is
unknown. Releases on this timeline are therefore named by the date of the pull request that made
the change, ``YYYY.MM.DD`` (``trtllm@2025.09.19``), taken from the PR's description or review in
the search tool's issues corpus, not its merge date. Only the state after PR #7849 was read in
code (``harmony_adapter.py`` at 38134b130944ed5c037949456df20300126ec728) and run
(``tools/trtllm_adapter_diff.py``: ``trtllm@2025.09.19`` matches it byte for byte); the state before
it, and each later change, is what the PR's description and the tests it added say
(``verified=False``).
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["TRTLLM_TIMELINE"]

_REPO = "NVIDIA/TensorRT-LLM"
_ADAPTER = f"{_REPO}@38134b130944ed5c037949456df20300126ec728:tensorrt_llm/serve/harmony_adapter.py"
_TESTS = f"{_REPO}@2d6bc80262dd1d2c073bbcd2fb3bb57b39c305b7:tests/unittest/llmapi/apps/test_harmony_parsing.py"


def _change(release: str, switch: str, before: object, after: object, summary: str, was: str, now: str, pr: int, *extra: str, note: str = "") -> Change:
    return Change(
        release=release, date=release.replace(".", "-"), switch=switch, before=before, after=after, summary=summary,
        behaviour_before=was, behaviour_after=now, sources=(f"{_REPO}#{pr}", *extra), verified=False, note=note,
    )


_AFTER_READ = "the after-behaviour is the adapter at 38134b13, run by tools/trtllm_adapter_diff.py (0 differences); the PR that brought it is from its description"
_FROM_TESTS = "from the PR's tests (test_harmony_parsing.py names it); its code was not read"

TRTLLM_TIMELINE = Timeline(
    server="trtllm",
    releases=(
        Release("2025.08.27", "2025-08-27", "PR #7261: chat completions for gpt-oss through the Harmony adapter"),
        Release("2025.09.19", "2025-09-19", "PR #7849: channel validation, role and usage chunks (the adapter read in code)"),
        Release("2025.12.03", "2025-12-03", "PR #9514: generation_config's eos ids are stop tokens (/v1/completions stops on <|call|>)"),
        Release("2025.12.12", "2025-12-12", "PR #9937: GET and DELETE /v1/responses/{response_id}"),
        Release("2026.01.20", "2026-01-20", "PR #10808: the role chunk only once"),
        Release("2026.03.09", "2026-03-09", "PR #12046: Harmony parser fixes for agentic coding"),
        Release("2026.03.17", "2026-03-17", "PR #12292: deltas grouped per engine response, cached_tokens, stream_options"),
        Release("2026.05.28", "2026-05-28", "PR #14708: one id and created per stream (the profile's defaults)"),
    ),
    changes=(
        _change("2025.09.19", "channel_validation", False, True, "a third channel after analysis and final stops the reply",
                "every message is surfaced, however many analysis and final messages the model repeats",
                "streamed: a chunk with finish_reason stop, the usage chunk, generation aborted; non-streamed: the extra messages are dropped",
                7849, _ADAPTER, note=_AFTER_READ),
        _change("2025.09.19", "stream_usage", "never", "always", "a usage chunk ends every stream",
                "no usage chunk", "a usage chunk (choices: []) before [DONE], asked for or not", 7849, _ADAPTER, note=_AFTER_READ),
        _change("2025.09.19", "role_chunk", "never", "every_batch", "a role chunk is sent",
                "no role chunk", "a {role: assistant} chunk before the chunks of every engine response (first_iteration was a local variable)",
                7849, _ADAPTER, note=_AFTER_READ),
        _change("2025.12.03", "generation_config_stops", False, True, "generation_config's eos_token_id list is the stop token ids",
                "on /v1/completions only the end id <|return|> stops the engine; <|call|> is output like any token",
                "<|call|> and <|endoftext|> stop it as stop words: trimmed, stop_reason their id", 9514,
                note="from the PR's title; sampling_params.py before it read (_setup sets only end_id); after it not read"),
        _change("2025.12.12", "responses_retrieve", False, True, "GET and DELETE /v1/responses/{response_id}",
                "no such routes: FastAPI's 404 {\"detail\":\"Not Found\"} (register_routes at e7f7345e adds /v1/responses for POST only)",
                "the stored response, or {id, object: response, deleted: true}; 400 storage disabled / invalid id, 404 not found",
                9937, f"{_REPO}@00057725d9a6591f033e44f31c219e2426827bb7:tensorrt_llm/serve/openai_server.py",
                f"{_REPO}@e7f7345e31e574b5d0918b756b871882c7346b3c:tensorrt_llm/serve/openai_server.py",
                note="both handlers read in code (openai_responses_get_response, openai_responses_delete_response); dated by the PR's review (2025-12-12), its merge date and first release not read"),
        _change("2026.01.20", "role_chunk", "every_batch", "first", "the role chunk comes once",
                "a role chunk before every engine response's chunks", "one role chunk, first", 10808, f"{_REPO}#10614",
                note="PR #10808 passes first_iteration from the postprocess args (review thread); fixes #10614"),
        _change("2026.03.09", "tool_calls_on_analysis", False, True, "calls on the analysis channel and bare recipients become tool calls",
                "to=functions.X on analysis is reasoning; a streamed to=python on commentary is preamble content; code calls keep 'functions.'",
                "all are tool_calls with the prefix stripped", 12046, _TESTS, note=_FROM_TESTS),
        _change("2026.03.09", "reasoning_content_alias", False, True, "reasoning_content repeats reasoning",
                "only reasoning carries the analysis text (reasoning_content null or absent)", "both fields carry it", 12046, _TESTS, note=_FROM_TESTS),
        _change("2026.03.09", "flush_final_batch", False, True, "the last engine response's tokens are parsed",
                "dropped: the last stream_interval tokens of a length-cut stream never arrive", "parsed before the finish chunk",
                12046, _TESTS, note=_FROM_TESTS),
        _change("2026.03.17", "merge_deltas", False, True, "one chunk per kind per engine response",
                "a chunk per token even when stream_interval groups tokens", "consecutive reasoning, content or call-argument deltas joined",
                12292, _TESTS, note=_FROM_TESTS),
        _change("2026.03.17", "stream_usage", "always", "stream_options", "stream_options.include_usage is honoured",
                "a usage chunk always", "a usage chunk unless include_usage is false", 12292, _TESTS, note=_FROM_TESTS),
        _change("2026.03.17", "cached_tokens_in_usage", False, True, "usage reports cached tokens",
                "prompt_tokens_details null", "prompt_tokens_details {cached_tokens}", 12292, _TESTS, note=_FROM_TESTS),
        _change("2026.05.28", "stable_stream_ids", False, True, "one id per stream",
                "every chunk has a fresh chatcmpl- id and created", "one id and created for the stream", 14708,
                note="from the PR's description; the newest stored postprocess_handlers.py passes stream_response_id"),
        _change("2026.05.28", "completion_usage_chunk", "chat_chunk", "text_completion", "the completions stream's usage chunk is a text_completion",
                "a ChatCompletionStreamResponse (chatcmpl- id, object chat.completion.chunk)", "a CompletionStreamResponse with the stream's id",
                14708, note="both versions read in the stored postprocess_handlers.py; the PR that changed it is unknown: dated with #14708, which gave that chunk the stream id (the class may have changed earlier)"),
    ),
)
