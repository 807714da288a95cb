"""vllm-mlx's gpt-oss timeline: the releases the ``vllm-mlx`` profile covers.

Read from the released wheels (``pip download --no-deps vllm-mlx==X``) and the repository
(waybarrios/vllm-mlx). The Harmony tool parser and the ``harmony`` reasoning parser first ship in
0.2.6 (waybarrios/vllm-mlx#50, for waybarrios/vllm-mlx#38), the ``gpt_oss`` reasoning parser in
0.2.7 (waybarrios/vllm-mlx#53). ``harmony_tool_parser.py`` is the
same from 0.2.6 to 0.4.0 and changes once, in 0.4.1 (waybarrios/vllm-mlx#562, merged 2026-08-04);
``gpt_oss_parser.py`` never changes; ``harmony_parser.py`` changes by two lines in 0.5.0 (no
behaviour change). What the switch does is checked by ``tools/vllm_mlx_diff.py`` against the 0.6.0
wheel and the 0.5.0 wheel (``vllm-mlx@0.5.0``): 7,002 replies each, 0 differ. Releases before 0.5.0
are not on the timeline: their servers differ in more than these switches (the diff tool finds 640
of 7,002 replies differ against the 0.4.0 and 0.4.1 wheels, streamed ones, and 1,346 against 0.3.0,
whose ``clean_output_text`` differs), so ``vllm-mlx@0.4.0`` is refused rather than answered wrongly;
``harmony_call_fix=false`` and ``body_generation_metadata=false`` give the parser and body of
those releases on today's wire (the tool-call part checked against the 0.4.0 wheel's parser by the
conformance tests, not byte for byte).
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["VLLM_MLX_TIMELINE"]

_PARSER = "vllm_mlx/tool_parsers/harmony_tool_parser.py"

VLLM_MLX_TIMELINE = Timeline(
    server="vllm-mlx",
    releases=(
        Release("0.5.0", "", "checked by tools/vllm_mlx_diff.py (0 of 7,002 differ)"),
        Release("0.6.0", "", "the release the profile is read from; checked by tools/vllm_mlx_diff.py (0 of 7,002 differ)"),
    ),
    changes=(
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
            note="ChatCompletionResponse in the 0.3.0 and 0.4.0 wheels; before the timeline's first release",
        ),
        Change(
            release="0.6.0",
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
            verified=False,
            note="diff of the 0.4.0 and 0.4.1 wheels and PR #562; the release boundary is before the timeline's first release (0.5.0), so only the switch reproduces the old parser",
        ),
    ),
)
