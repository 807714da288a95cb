"""The gpt-oss reference Responses server's timeline: its changes by release of the ``gpt-oss`` package.

Releases are openai/gpt-oss's tags (dates of the tagged commits); each change was read in the
tagged sources (``git show vX:gpt_oss/responses_api/…``) on both sides of its boundary.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["GPTOSS_REFERENCE_TIMELINE"]

GPTOSS_REFERENCE_TIMELINE = Timeline(
    server="gptoss-reference",
    releases=(
        Release("0.0.5", "2025-08-28", "the first tag of openai/gpt-oss"),
        Release("0.0.6", "2025-09-03", "max output tokens 131072"),
        Release("0.0.7", "2025-09-15", ""),
        Release("0.0.8", "2025-09-28", ""),
        Release("0.0.9", "2026-01-13", "message item ids; the release the goldens were recorded from (commit 7b58334)"),
    ),
    changes=(
        Change(
            release="0.0.6",
            date="2025-09-02",
            switch="default_max_output_tokens",
            before=10000,
            after=131072,
            summary="the default max_output_tokens of a Responses request rises from 10000 to 131072",
            behaviour_before="a request without max_output_tokens stops after 10000 kept tokens and echoes max_output_tokens: 10000",
            behaviour_after="the default is 131072 (types.DEFAULT_MAX_OUTPUT_TOKENS)",
            sources=("openai/gpt-oss#165", "openai/gpt-oss@24804a6:gpt_oss/responses_api/types.py"),
            verified=True,
            note="read in the v0.0.5 and v0.0.6 tags' types.py",
        ),
        Change(
            release="0.0.9",
            date="2025-10-06",
            switch="event_item_ids",
            before=False,
            after=True,
            summary="stream events name their item, and message items get item_ ids",
            behaviour_before='every event\'s item_id is the models\' default "item_1234"; message items have no id key (types.Item had no id field)',
            behaviour_after="events carry their item's rs_ or item_<32 hex> id, the same as in response.completed",
            sources=("openai/gpt-oss#199", "openai/gpt-oss@0a9ec7f:gpt_oss/responses_api/api_server.py"),
            verified=True,
            note="read in the v0.0.8 and v0.0.9 tags' api_server.py; goldens recorded from both tags",
        ),
        Change(
            release="0.0.9",
            date="2025-10-06",
            switch="analysis_recipient_reasoning",
            before=True,
            after=False,
            summary="an analysis message with a recipient is no longer reasoning",
            behaviour_before="it is closed as reasoning in the stream and is a reasoning item in the response (unless it became a function call)",
            behaviour_after="it is skipped (generate_response: `if entry_dict.get(\"recipient\"): continue`)",
            sources=("openai/gpt-oss#199", "openai/gpt-oss@0a9ec7f:gpt_oss/responses_api/api_server.py"),
            verified=True,
            note="goldens recorded from the v0.0.8 and v0.0.9 tags",
        ),
        Change(
            release="0.0.9",
            date="2025-10-06",
            switch="stream_browser_calls",
            before=False,
            after=True,
            summary="a browser.* recipient without a browser tool is streamed as a function call",
            behaviour_before="no event for it (the stream skipped every browser.* recipient)",
            behaviour_after="an output_item.done with a function_call named browser.NAME (_resolve_browser_recipient finds no browser tool)",
            sources=("openai/gpt-oss#199", "openai/gpt-oss@0a9ec7f:gpt_oss/responses_api/api_server.py"),
            verified=True,
            note="goldens recorded from the v0.0.8 and v0.0.9 tags",
        ),
    ),
)
