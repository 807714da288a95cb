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
        Release("0.3.21", "", "gpt-oss support (lmstudio-bug-tracker#830 reports 0.3.21 beta 3 on 2025-08-02)"),
        Release("0.3.22", "", "the release lmstudio-bug-tracker#876 and #873 report (2025-08-08)"),
        Release("0.3.23", "2025-08-12", "reasoning moves to message.reasoning (API changelog)"),
        Release("0.4.0", "", "the native REST API v1 (API changelog)"),
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
        Change(
            release="0.4.0",
            date="",
            switch="rest_api_v1",
            before=False,
            after=True,
            summary="the native REST API v1 (/api/v1/*), with GET /api/v1/models",
            behaviour_before="GET /api/v1/models is an unknown route: `Unexpected endpoint or method. (GET /api/v1/models)`",
            behaviour_after='GET /api/v1/models lists the models: {"models":[{"type","publisher","key",…,"loaded_instances",…}]}',
            sources=(
                "https://lmstudio.ai/docs/developer/api-changelog (LM Studio 0.4.0)",
                "lmstudio-ai/docs@35ec6d3d:1_developer/2_rest/list.md",
            ),
            verified=True,
            note="release from LM Studio's own API changelog; its date is not given there",
        ),
    ),
)
