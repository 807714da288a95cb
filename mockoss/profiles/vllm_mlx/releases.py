"""vllm-mlx's gpt-oss timeline: the releases the ``vllm-mlx`` profile covers.

Read from the released wheels (``pip download --no-deps vllm-mlx==X``; dates are the wheels' file
dates) and the repository (waybarrios/vllm-mlx). The Harmony tool parser and the ``harmony``
reasoning parser first ship in 0.2.6 (waybarrios/vllm-mlx#50, for waybarrios/vllm-mlx#38), the
``gpt_oss`` reasoning parser in 0.2.7 (waybarrios/vllm-mlx#53). ``harmony_tool_parser.py`` is the
same from 0.2.6 to 0.4.0 and changes once, in 0.4.1 (waybarrios/vllm-mlx#562); ``gpt_oss_parser.py``
never changes; ``harmony_parser.py`` changes by two lines in 0.5.0 (no behaviour change). The
server changes below were found by diffing ``server.py`` and ``api/models.py`` between wheels.

Every release listed is checked by ``tools/vllm_mlx_diff.py`` against its own wheel with the switch
values the timeline gives it (0.4.0, 0.4.1, 0.5.0, 0.6.0: 0 differences each), so every change
but ``body_generation_metadata`` (whose "before" is 0.3.0) is verified on both sides of its boundary. 0.3.0 and earlier are not on the timeline: against the
0.3.0 wheel the diff tool still finds hundreds of differing streamed Responses replies, so
``vllm-mlx@0.3.0`` is refused rather than answered wrongly.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["VLLM_MLX_TIMELINE"]

_PARSER = "vllm_mlx/tool_parsers/harmony_tool_parser.py"

VLLM_MLX_TIMELINE = Timeline(
    server="vllm-mlx",
    releases=(
        Release("0.4.0", "2026-06-28", "the last release whose Harmony tool parser needs <|call|>; checked by tools/vllm_mlx_diff.py"),
        Release("0.4.1", "2026-08-12", "gpt-oss tool calls parsed (waybarrios/vllm-mlx#562); checked by tools/vllm_mlx_diff.py"),
        Release("0.5.0", "2026-09-17", "closing finish chunk (#673), tool parsing only with tools; checked by tools/vllm_mlx_diff.py"),
        Release("0.6.0", "2026-10-20", "the release the profile is read from; checked by tools/vllm_mlx_diff.py"),
    ),
    changes=(
        Change(
            release="0.5.0",
            date="2026-09-17",
            switch="tool_parse_needs_tools",
            before=False,
            after=True,
            summary="the tool parser runs only when the request declares tools",
            behaviour_before="_parse_tool_calls_with_parser ran the Harmony parser without tools too: a Responses request with no tools could get a function_call item, and its message text was the parser's control-token-stripped leftover",
            behaviour_after="without declared tools the text is returned untouched",
            sources=("waybarrios/vllm-mlx@v0.4.1:vllm_mlx/server.py", "waybarrios/vllm-mlx@v0.5.0:vllm_mlx/server.py"),
            verified=True,
            note="diff of _parse_tool_calls_with_parser in the 0.4.1 and 0.5.0 wheels; tools/vllm_mlx_diff.py runs both",
        ),
        Change(
            release="0.5.0",
            date="2026-09-17",
            switch="stream_finish_guard",
            before=False,
            after=True,
            summary="a chat stream whose finished output a parser swallowed gets a finish_reason chunk",
            behaviour_before="the finished output reaches the parsers only with text; when a parser holds that text the stream ends with data: [DONE] and no chunk carries finish_reason (strict clients: 'Stream ended without finish_reason'), e.g. a gpt-oss chat stream cut by max_tokens inside a channel header",
            behaviour_after='a closing chunk "delta":{} with the finish_reason and usage',
            sources=("waybarrios/vllm-mlx#672", "waybarrios/vllm-mlx#673", "waybarrios/vllm-mlx#628", "waybarrios/vllm-mlx@v0.5.0:vllm_mlx/server.py"),
            verified=True,
            note="absent from the 0.4.1 wheel's stream_chat_completion, present in 0.5.0's (#673 merged 2026-08-15); the switch also covers the 0.5.0 Responses stream, which from then on passes reasoning-parser content and finished outputs through the tool parser; tools/vllm_mlx_diff.py runs both",
        ),
        Change(
            release="0.4.0",
            date="2026-06-28",
            switch="body_generation_metadata",
            before=False,
            after=True,
            summary="chat responses carry generation_metadata (null for gpt-oss)",
            behaviour_before="no generation_metadata key",
            behaviour_after='"generation_metadata": null after usage',
            sources=("waybarrios/vllm-mlx@v0.4.0:vllm_mlx/api/models.py",),
            verified=False,
            note="ChatCompletionResponse in the 0.3.0 and 0.4.0 wheels; 0.3.0 is before the timeline's first release, so only the 0.4.0 side was run",
        ),
        Change(
            release="0.6.0",
            date="2026-10-20",
            switch="chunk_generation_metadata",
            before=False,
            after=True,
            summary="stream chunks carry generation_metadata (null for gpt-oss)",
            behaviour_before="chunks end with usage",
            behaviour_after='every chunk ends with "generation_metadata": null',
            sources=("waybarrios/vllm-mlx@v0.6.0:vllm_mlx/api/models.py",),
            verified=True,
            note="ChatCompletionChunk in the 0.5.0 and 0.6.0 wheels",
        ),
        Change(
            release="0.4.1",
            date="2026-08-04",
            switch="harmony_call_fix",
            before=False,
            after=True,
            summary="a gpt-oss call no longer needs a <|call|> the engine never writes",
            behaviour_before="the tool parser's pattern ends a call only at <|call|>, an EOS token mlx-lm does not decode: no tool_calls, streamed or not; the analysis-only text reaches no parser",
            behaviour_after="a call ends at <|call|>, <|end|>, <|return|>, <|start|>, the next channel or the end (invalid JSON only with an explicit end); streamed calls found (harmony reasoning parser or none); non-streamed still lost to the engine's clean_output_text",
            sources=("waybarrios/vllm-mlx#562", f"waybarrios/vllm-mlx@v0.4.0:{_PARSER}", f"waybarrios/vllm-mlx@v0.4.1:{_PARSER}"),
            verified=True,
            note="diff of the 0.4.0 and 0.4.1 wheels and PR #562; tools/vllm_mlx_diff.py runs both",
        ),
    ),
)
