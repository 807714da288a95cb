"""SGLang's gpt-oss timeline: the changes of the ``sglang`` profile's switches by release.

Every boundary here was found by reading the released wheels (``pip download --no-deps
sglang==X``): ``parser/harmony_parser.py`` first ships in 0.5.2 and is unchanged up to 0.5.23;
``function_call/gpt_oss_detector.py`` changes as listed. 0.5.1 and earlier parse gpt-oss with a
different detector (no string parser) and are not on this timeline. Dates are the wheels' file
dates.

The timeline covers the chat path only. ``/v1/responses`` and ``/v1/completions`` are emulated as
0.5.23 serves them, whatever the release: the 0.5.2 and 0.5.4 wheels' ``serving_responses.py``
(1,276 and 1,321 lines against 0.5.23's 3,138) build the stream from vLLM's older event objects
and, in 0.5.2, answer errors in the flat ``ErrorResponse`` shape, a different generator rather than
a switch, so ``sglang@0.5.2`` does not change them (read from the wheels, not emulated). What 0.5.2
to 0.5.23 share and the profile keeps: ``HarmonyContext`` waiting for a ``prompt_token_ids`` key
(``input_tokens`` 0) and ``parse_output_message``'s ``Unknown recipient`` error. The
``harmony_errors="skip"`` guard came after 0.5.23 (no release yet), so it is a switch, not a
change here.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["SGLANG_TIMELINE"]

_DETECTOR = "python/sglang/srt/function_call/gpt_oss_detector.py"

SGLANG_TIMELINE = Timeline(
    server="sglang",
    releases=(
        Release("0.5.2", "2025-09-11", "the first release with the string Harmony parser (parser/harmony_parser.py)"),
        Release("0.5.3", "2025-10-06", "plain text passes through the gpt-oss tool-call detector when streamed"),
        Release("0.5.4", "2025-10-24", "tool names may hold '-'"),
        Release("0.5.23", "2026-10-30", "the release the profile is read from"),
    ),
    changes=(
        Change(
            release="0.5.3",
            date="2025-10-06",
            switch="stream_plain_text_passthrough",
            before=False,
            after=True,
            summary="streamed with tools declared, text without Harmony markers reaches content",
            behaviour_before="the tool-call detector keeps marker-free text (the final answer the reasoning parser hands on) in its buffer: a streamed answer never arrives when tools are declared",
            behaviour_after="the text is passed through as content; the detector's inner parser still holds it, so text streamed before a later marker comes out twice",
            sources=(f"sgl-project/sglang@v0.5.2:{_DETECTOR}", f"sgl-project/sglang@v0.5.3:{_DETECTOR}"),
            verified=True,
            note="diff of the two wheels' gpt_oss_detector.py (the pass-through block is new in 0.5.3)",
        ),
        Change(
            release="0.5.4",
            date="2025-10-24",
            switch="hyphenated_tool_names",
            before=False,
            after=True,
            summary="the call pattern takes '-' in tool names",
            behaviour_before="to=functions.get-weather matches only up to 'get', the header no longer fits the pattern, and the call is dropped",
            behaviour_after="the call to get-weather is found",
            sources=(f"sgl-project/sglang@v0.5.3:{_DETECTOR}", f"sgl-project/sglang@v0.5.4:{_DETECTOR}"),
            verified=True,
            note="diff of the two wheels' gpt_oss_detector.py (tool_extract_pattern)",
        ),
    ),
)
