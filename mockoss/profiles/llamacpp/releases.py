"""llama.cpp's gpt-oss timeline: the changes of the ``llamacpp`` profile's switches by build.

llama.cpp names releases by build number (``b8651``). The repository is too large to bring here,
so build boundaries come from dated public references and are marked unverified: a change's
``release`` is a build known to postdate the merge, not necessarily the first build with it.
One build was run: b9553, whose own chat code (vendored at Telosnex/fllama@1d28604d) recorded
tests/golden/llamacpp-b9553; a behaviour those goldens show is ``verified`` on its side.

The newest release, the build the profile follows (``common/parsers/gpt-oss.cpp@2629d7b5``, from
ggml-org/llama.cpp#27764, merged 2026-08-26), is named ``b10864``: a release on 2026-09-08
(ollama/ollama#18317 bumps to it), inferred to postdate the merge (b10630 was out by 2026-08-25,
ollama/ollama#18003; ~16 builds a day since b10216, 2026-07-31). It was named ``b9000`` before
2026-12 (a placeholder; the profile's ``build_info`` still says ``b9000-2629d7b5``, unchanged so
that replies keep their bytes). Timelines order releases by number, and a real b9000 (May 2026)
comes before b9553, so ``llamacpp@b9000`` still resolves, as that build: b8651's switches with
b9553's values for the changes dated after it, and a ``ReleaseWarning`` that says to pin
``llamacpp@b10864`` for the behaviour the name had (:attr:`Timeline.renamed`).
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
            "b9000",
            "",
            "not checked: a build between b8651 and b9553, listed because mockoss named the build it follows "
            "b9000 until 2026-12 (now b10864): llamacpp@b9000 gets b9553's behaviour",
        ),
        Release(
            "b9553",
            "2026-06",
            "verified by running its code: tests/golden/llamacpp-b9553 (Telosnex/fllama@1d28604d vendors it, "
            "2026-06-07)",
        ),
        Release("b10216", "2026-07-31", "the later parse-error wording seen (ggml-org/llama.cpp#26381)"),
        Release(
            "b10864",
            "2026-09-08",
            "the build the profile follows (common/parsers/gpt-oss.cpp@2629d7b5, PR #27764 merged 2026-08-26; "
            "release date from ollama/ollama#18317); named b9000 until 2026-12",
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
            behaviour_after=("the grammar matches or the turn fails with HTTP 500 (its words: the switch parse_error)"),
            sources=("ggml-org/llama.cpp#17136", "ggml-org/llama.cpp#20393"),
            verified=False,
            note=(
                "first build not checked; #20393 also says it removed reasoning_format=none for gpt-oss, "
                "which the profile still accepts (not reproduced here). Until 2026-12 this change also dated "
                "the 'peg-native format' wording here: b9553 still has the older one (parse_error)"
            ),
        ),
        Change(
            release="b10216",
            date="2026-07-31",
            switch="parse_error",
            before="position",
            after="format",
            summary="a failed PEG parse no longer quotes the output: the error names the format instead",
            behaviour_before=(
                "HTTP 500 (a stream: its error frame) 'Failed to parse input at pos N: <the input from N on>', N in "
                "bytes of '<|start|>assistant' + the output (Telosnex/fllama@1d28604d common/chat.cpp:2529, b9553)"
            ),
            behaviour_after=("HTTP 500 'The model produced output that does not match the expected peg-native format'"),
            sources=(
                "Telosnex/fllama@1d28604d:src/llama.cpp/common/chat.cpp",
                "ggml-org/llama.cpp#26381",
                "mostlygeek/llama-swap#856",
                "ggml-org/llama.cpp#25321",
            ),
            verified=False,
            note=(
                "the old words verified at b9553 (244 goldens); the new ones seen in #26381's log at b10216 "
                "(2026-07-31), a build known to have them, not the first: llama-swap#856 shows them on 2026-06-17 "
                "(build not named). The commit was not found"
            ),
        ),
        Change(
            release="b7756",
            date="2026-01",
            switch="template_items_check",
            before=False,
            after=True,
            summary="a declared tool with an array parameter without 'items' fails the gpt-oss template",
            behaviour_before="rendered ('any[]'; minja, not checked)",
            behaviour_after=(
                "HTTP 500 server_error before generating: '\\n------------\\nWhile executing If at line 12, column 13 "
                "in source:…Error: Function is not a bool value' (the engine looks param_spec['items'] up as the "
                "dict's built-in items: common/jinja/runtime.cpp:818-822, value.h:135)"
            ),
            sources=(
                "Telosnex/fllama@1d28604d:src/llama.cpp/common/jinja/runtime.cpp",
                "ggml-org/llama.cpp@07129346:common/jinja/runtime.cpp",
                "ggml-org/llama.cpp#18462",
            ),
            verified=False,
            note=(
                "verified at b9553 (15 goldens); placed at the engine's first build because runtime.cpp@07129346 "
                "(January) has the same fallback, not run there. No later fix is known: runtime.cpp@6897f5df (date "
                "not checked) still falls back to the built-in, so the newest release keeps it (a review found the "
                "'fix' this timeline listed at b10864 contradicted by its own source); turn it off with "
                "template_items_check=false"
            ),
        ),
        Change(
            release="b10864",
            date="2026-08-26",
            switch="tool_call_opens",
            before="header",
            after="recipient",
            summary="gpt-oss's parser moves to common/parsers/gpt-oss.cpp: a streamed tool call opens at "
            "' to=functions.'",
            behaviour_before=(
                "the call appears once its whole header has parsed, its first delta with the whole name and "
                "arguments '{'; a header that then fails sends no tool delta before the error (tool_open spans "
                "the header: common/chat.cpp:1167-1179, chat-peg-parser.cpp:320-333 at b9553)"
            ),
            behaviour_after="a name prefix, or a call with no name, streams first (common/parsers/gpt-oss.cpp@2629d7b5)",
            sources=(
                "Telosnex/fllama@1d28604d:src/llama.cpp/common/chat.cpp",
                "ggml-org/llama.cpp#27764",
                "ggml-org/llama.cpp@2629d7b5:common/parsers/gpt-oss.cpp",
                "ollama/ollama#18317",
            ),
            verified=False,
            note=(
                "before verified at b9553 (50 goldens), after read at 2629d7b5 only; b10864 is inferred to "
                "postdate #27764 (module docstring), and whether the change came with #27764 or before is not checked. "
                "The name grows ('get', then 'get_weather', each with the id) because a literal cut by the end of "
                "the input is a partial match whose tag node is kept (common/peg-parser.cpp), the mapper takes "
                "the tool-name node's text as it is (common/chat-peg-parser.cpp@0082ad91) and compute_diffs "
                "re-sends the whole longer name (b9553 common/chat.cpp:253-270). The server does not hold names "
                "back: task_result_state::update_chat_msg's filter_tool_calls (in llama.cpp from ~2026-04, PR not "
                "found) defaults to false and server_task_result_cmpl_partial::update passes none (b9553 "
                "server-task.cpp:1396, 00efb3e1, and a later copy); only forks pass true"
            ),
        ),
        Change(
            release="b10216",
            date="2026-06-21",
            switch="function_call_item_id",
            before=False,
            after=True,
            summary="/v1/responses function_call items get an item id: 'id' is 'fc_<id>' and 'call_id' "
            "becomes 'call_<id>'",
            behaviour_before=(
                "a function_call item has no 'id' and 'call_id':'fc_<id>', in the output and the stream's "
                "output_item.added/done (Telosnex/fllama@1d28604d src/llama.cpp/tools/server/server-task.cpp:985,"
                "1084,1666, b9553; ggml-org/llama.cpp@00efb3e1); a client that requires the item id fails "
                "(#24882: Rig 0.39 'missing field id')"
            ),
            behaviour_after=(
                "{'id':'fc_<id>','type':'function_call','status','arguments','call_id':'call_<id>','name'} in the "
                "output and output_item.done; output_item.added {'id':'fc_<id>','arguments':'','call_id':"
                "'call_<id>','name','type','status':'in_progress'}; function_call_arguments.delta item_id "
                "'fc_<id>' as before"
            ),
            sources=(
                "ggml-org/llama.cpp#24882",
                "ggml-org/llama.cpp@00efb3e1:tools/server/server-task.cpp",
                "Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-task.cpp",
            ),
            verified=False,
            note=(
                "#24882 (merged 2026-06-21, after b9553) describes the 'id'; the 'call_' prefix is read in a later "
                "server-task.cpp (no stored version has 'id' with 'call_id':'fc_'), so the same PR is inferred to "
                "change both; the PR diff was not read. b10216 (2026-07-31) is a build known to postdate the "
                "merge, not the first. b10864, the default, has it"
            ),
        ),
    ),
    # the followed build's name until 2026-12 (module docstring): naming it warns which to pin
    renamed={"b9000": "b10864"},
)
