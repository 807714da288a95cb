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
        Release(
            "b6100",
            "2025-08",
            "gpt-oss era (ggml-org/llama.cpp#15091, #15181): the regex parser; build number not checked",
        ),
        Release(
            "b6301",
            "2025-08-27",
            "a build after PR #15243 (date from luncliff/vcpkg-registry#433, which links the release)",
        ),
        Release(
            "b7756",
            "2026-01",
            "llama.cpp's own Jinja engine (ggml-org/llama.cpp#18462; first build per #19476's bisection)",
        ),
        Release(
            "b8651", "2026-04-03", "a build after PR #20393 (date from gominimal/pkgs#40, which links the release)"
        ),
        Release(
            "b9000", "", "the build the profile follows (common/parsers/gpt-oss.cpp@2629d7b5; build_info placeholder)"
        ),
    ),
    changes=(
        Change(
            release="b6301",
            date="2025-08-11",
            switch="template_channel_check",
            before=True,
            after=False,
            summary="the gpt-oss template's check for Harmony markup in an assistant message's content patched "
            "out at load, so a client may send back the markup --reasoning-format none put in content",
            behaviour_before=(
                "an assistant message whose content holds '<|channel|>analysis<|message|>' or "
                "'<|channel|>final<|message|>' is HTTP 500 server_error 'You have passed a message containing "
                "<|channel|> tags in the content field…' before generating (ggml-org/llama.cpp#15091, the "
                "launch build's report: the client sent back the content of the turn before)"
            ),
            behaviour_after="accepted: the content is rendered as it is (the template's check reads '{%- if false %}')",
            sources=(
                "ggml-org/llama.cpp#15243",
                "ggml-org/llama.cpp@fba5c0d6:common/chat.cpp",
                "ggml-org/llama.cpp#15091",
                "luncliff/vcpkg-registry#433",
            ),
            verified=False,
            note=(
                "#15243 (commit fba5c0d6) merged 2025-08-11; b6301 (2025-08-27) is a build known to postdate it, "
                "not the first: the builds from fba5c0d6's to b6300 lack the check but get it here"
            ),
        ),
        Change(
            release="b7756",
            date="2026-01",
            switch="template_engine",
            before="minja",
            after="jinja",
            summary="chat templates rendered by llama.cpp's own Jinja engine instead of minja: a template's "
            "raise_exception reaches the client decorated with its source position",
            behaviour_before=(
                "HTTP 500 server_error whose message starts with the template's text, followed by minja's "
                "location suffixes (' at row R, column C:' and source lines; ggml-org/llama.cpp#15091, #17040); "
                "mockoss sends the template's text alone"
            ),
            behaviour_after=(
                "HTTP 500 server_error, message '\\n------------\\nWhile executing CallExpression at line L, column "
                "C in source:\\n...<80 bytes around the call>...\\n<caret>\\nError: Jinja Exception: <text>' "
                "(common/jinja/runtime.cpp statement::execute, utils.h peak_source)"
            ),
            sources=(
                "ggml-org/llama.cpp#18462",
                "ggml-org/llama.cpp#19476",
                "ggml-org/llama.cpp@07129346:common/jinja/runtime.cpp",
                "ggml-org/llama.cpp@5c5f166e:common/jinja/utils.h",
                "ggml-org/llama.cpp#20733",
            ),
            verified=False,
            note=(
                "b7756 is the first engine build per #19476 (a user's bisection, 'b7755 and below'), not checked "
                "against tags; the decoration was read at runtime.cpp@07129346 only; minja's suffixes not reproduced"
            ),
        ),
        Change(
            release="b8651",
            date="2026-02-18",
            switch="thinking_field",
            before="with_tool_calls",
            after="always",
            summary="gpt-oss: content dropped from an assistant message whose reasoning_content becomes the "
            "template's thinking beside tool calls",
            behaviour_before=(
                "an assistant message with content, reasoning_content and tool_calls is HTTP 500 'Cannot pass "
                "both content and thinking in an assistant message with tool calls! …' (the template's raise)"
            ),
            behaviour_after=(
                "accepted (the content is not rendered); every message's reasoning_content is checked for Harmony markup"
            ),
            sources=(
                "ggml-org/llama.cpp#19704",
                "ggml-org/llama.cpp#19703",
                "ggml-org/llama.cpp#16937",
                "ggml-org/llama.cpp#17040",
                "anomalyco/opencode#10805",
            ),
            verified=False,
            note=(
                "#19704 merged 2026-02-18; b8651 is a build known to postdate it, not the first. The copy for "
                "every message (not only with tool calls) came later, in common/parsers/gpt-oss.cpp (PR not found); "
                "before #16937 (2025-11-02) the copy was made elsewhere, not reproduced (b6100 gets 'with_tool_calls')"
            ),
        ),
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
