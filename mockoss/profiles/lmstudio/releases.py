"""LM Studio's gpt-oss timeline: the changes of the ``lmstudio`` profile's switches by release.

LM Studio is closed source: releases and behaviours come from its published API changelog
(``https://lmstudio.ai/docs/app/api-changelog``) and bug reports.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["LMSTUDIO_TIMELINE"]

LMSTUDIO_TIMELINE = Timeline(
    server="lmstudio",
    releases=(
        Release("0.3.21", "2025-08-05", "gpt-oss support (lmstudio-bug-tracker#830 reports 0.3.21 beta 3)"),
        Release("0.3.22", "2025-08-07", "the release lmstudio-bug-tracker#876 and #873 report"),
        Release("0.3.23", "2025-08-12", "reasoning moves to message.reasoning (API changelog)"),
        Release("0.4.14", "2026-05", "a 0.4 release (lmstudio-bug-tracker#1979 reports 0.4.14+4)"),
    ),
    changes=(
        Change(
            release="0.3.23",
            date="2025-08-12",
            switch="reasoning_field",
            before="content",
            after="reasoning",
            summary="gpt-oss reasoning leaves message.content for choices.message.reasoning / delta.reasoning",
            behaviour_before="the analysis text is prepended to the answer in `content` (lmstudio-bug-tracker#851, lmstudio-js#388)",
            behaviour_after="`reasoning` holds the analysis, `content` only the answer",
            sources=(
                "https://lmstudio.ai/docs/app/api-changelog (LM Studio 0.3.23)",
                "lmstudio-ai/lmstudio-bug-tracker#851",
                "lmstudio-ai/lmstudio-js#388",
            ),
            verified=True,
            note="release and behaviour from LM Studio's own changelog; the `reasoning_content` value is an app setting, not a release",
        ),
    ),
)
