"""llama.cpp's gpt-oss timeline: the changes of the ``llamacpp`` profile's switches by build.

llama.cpp names releases by build number (``b8651``). The repository is too large to bring here,
so build boundaries come from dated public references and are marked unverified: a change's
``release`` is a build known to postdate the merge, not necessarily the first build with it.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["LLAMACPP_TIMELINE"]

LLAMACPP_TIMELINE = Timeline(
    server="llamacpp",
    releases=(
        Release("b6100", "2025-08", "gpt-oss era (ggml-org/llama.cpp#15091, #15181): the regex parser; build number not checked"),
        Release("b8651", "2026-04-03", "a build after PR #20393 (date from gominimal/pkgs#40, which links the release)"),
        Release("b9000", "", "the build the profile follows (common/parsers/gpt-oss.cpp@2629d7b5; build_info placeholder)"),
    ),
    changes=(
        Change(
            release="b8651",
            date="2026-03-11",
            switch="parser",
            before="regex",
            after="peg",
            summary="gpt-oss output parsed by the PEG grammar instead of the regex parser",
            behaviour_before=(
                "unknown headers and non-JSON arguments are skipped, never an error; an incomplete header "
                "falls back to the whole output as content"
            ),
            behaviour_after=(
                "the grammar matches or the turn fails with HTTP 500 `The model produced output that does not "
                "match the expected peg-native format` (ggml-org/llama.cpp#25321)"
            ),
            sources=("ggml-org/llama.cpp#17136", "ggml-org/llama.cpp#20393", "ggml-org/llama.cpp#25321"),
            verified=False,
            note=(
                "first build not checked; #20393 also says it removed reasoning_format=none for gpt-oss, "
                "which the profile still accepts (not reproduced here)"
            ),
        ),
    ),
)
