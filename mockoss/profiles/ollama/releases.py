"""Ollama's gpt-oss timeline: the changes of the ``ollama`` profile's switches by release.

Release boundaries were checked in Ollama's history (``ollama/ollama``, tags and merge commits,
read with ``git tag --contains``). ``ollama@0.11.3`` also reports ``"version":"0.11.3"`` on
``/api/version`` (the ``version`` switch follows the release).
"""

from __future__ import annotations

from mockoss.profiles.timeline import Change, Release, Timeline

__all__ = ["OLLAMA_TIMELINE"]

OLLAMA_TIMELINE = Timeline(
    server="ollama",
    releases=(
        Release("0.11.1", "2025-08-05", "gpt-oss support (ollama/ollama#11672, fa7776fd2) in a release"),
        Release("0.11.3", "2025-08-05", "the release ollama/ollama#11781 reports"),
        Release("0.11.5", "2025-08-18", "first release with PR #11861"),
        Release("0.33.0-rc2", "2026-08-21", "the source the profile follows (fb307609)"),
    ),
    changes=(
        Change(
            release="0.11.5",
            date="2025-08-11",
            switch="tool_call_error",
            before="v0.11.3",
            after="current",
            summary="a gpt-oss tool call whose arguments are not JSON: error under the key `error`",
            behaviour_before=(
                'the chat/generate stream carries {"error parsing tool call":"<Go error>"} at HTTP 200 '
                "(a key no client reads); non-streamed: 500 unexpected error format in response"
            ),
            behaviour_after="{\"error\":\"error parsing tool call: raw='…', err=…\"} (500, or an NDJSON line once streaming)",
            sources=(
                "ollama/ollama#11781",
                "ollama/ollama#11704",
                "ollama/ollama#11861",
                "ollama/ollama@ee04dbba5:server/routes.go",
            ),
            verified=True,
            note="merge dbfd7bd02 first tagged in v0.11.5 (git tag --contains); absent from v0.11.4",
        ),
    ),
    version_switch="version",
)
