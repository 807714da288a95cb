"""Server timelines: releases resolve to switch values, the newest release is the profile itself."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from mockoss.cli import main
from mockoss.profiles.registry import PROFILES, ProfileError, get_profile, switch_names
from mockoss.profiles.releases import TIMELINES, ReleaseWarning, split_release
from mockoss.profiles.timeline import Change, Release, Timeline, TimelineError, format_timeline, release_key


def _change(release: str, before: object, after: object, switch: str = "s") -> Change:
    return Change(release, switch, before, after, "x", "before", "after", ("o/r#1",), verified=False)


def test_release_order_counts_digits_and_a_suffixed_build_precedes_its_release() -> None:
    names = ["0.11.0", "0.10.1.1", "0.10.1", "0.10.1+gptoss", "0.9.2", "0.10.2"]
    assert sorted(names, key=release_key) == ["0.9.2", "0.10.1+gptoss", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0"]
    assert release_key("0.33.0-rc2") < release_key("0.33.0") < release_key("0.33.1")
    assert release_key("b6100") < release_key("b8651")
    with pytest.raises(TimelineError, match="not a version"):
        release_key("latest")


def test_switches_at_takes_the_newest_change_at_or_before_the_release() -> None:
    timeline = Timeline("x", (Release("1.0"), Release("3.0")), (_change("2.0", "a", "b"), _change("4.0", "b", "c")))
    assert timeline.switches_at("1.0") == {"s": "a"}
    assert timeline.switches_at("2.0") == {"s": "b"}
    assert timeline.switches_at("3.5") == {"s": "b"}  # an unlisted release between two changes
    assert timeline.switches_at("4.0") == {"s": "c"}
    with pytest.raises(TimelineError, match="starts at 1.0"):
        timeline.switches_at("0.9")


def test_a_timeline_whose_changes_do_not_chain_is_refused() -> None:
    with pytest.raises(TimelineError, match="'b' after 2.0 but 4.0 changes it from 'z'"):
        Timeline("x", (Release("1.0"),), (_change("2.0", "a", "b"), _change("4.0", "z", "c")))


@pytest.mark.parametrize("server", sorted(TIMELINES))
def test_each_timeline_ends_on_the_profile_defaults(server: str) -> None:
    """Bare ``vllm`` is the newest release: a change whose ``after`` is not the profile's default
    would make ``vllm@<newest>`` and ``vllm`` differ."""
    timeline = TIMELINES[server]
    profile = PROFILES[server]
    newest = timeline.switches_at(timeline.newest)
    version = timeline.version_switch
    assert {k: v for k, v in newest.items() if k != version} == {
        k: getattr(profile, k) for k in newest if k != version
    }
    assert set(newest) <= set(switch_names(profile))


@pytest.mark.parametrize("server", sorted(TIMELINES))
def test_every_change_names_a_public_source_and_says_whether_it_is_verified(server: str) -> None:
    for change in TIMELINES[server].changes:
        assert change.sources and all("#" in s or "@" in s or s.startswith("http") for s in change.sources), change
        assert isinstance(change.verified, bool)
        assert change.behaviour_before and change.behaviour_after and change.summary
        if not change.verified:
            assert change.note or any("#" in s for s in change.sources), change


def test_a_release_resolves_to_the_switch_values_in_force_at_it() -> None:
    old = get_profile("vllm@0.10.1.1")
    assert old.name == "vllm@0.10.1.1"
    assert (old.chat_parser, old.responses_stream_function_calls, old.reasoning_field) == (
        "reasoning_and_final", False, "reasoning_content"
    )
    assert old.version == "0.10.1.1"
    assert get_profile("vllm@0.27.0").stream_finish_keeps_length is False
    newest = get_profile(f"vllm@{TIMELINES['vllm'].newest}")
    assert dataclasses.replace(newest, name="vllm", version=PROFILES["vllm"].version) == PROFILES["vllm"]


def test_user_switches_apply_on_top_of_a_release() -> None:
    profile = get_profile("vllm@0.27.0", {"stream_finish_keeps_length": True})
    assert profile.stream_finish_keeps_length is True and profile.chat_parser == "harmony_parser"
    with pytest.raises(ProfileError, match="has no switch 'nope'"):
        get_profile("vllm@0.27.0", {"nope": 1})
    with pytest.raises(ProfileError, match="chat_parser must be"):
        get_profile("vllm@0.27.0", {"chat_parser": "x"})


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("vllm@0.9.0", "the vllm timeline starts at 0.10.1+gptoss"),
        ("vllm@latest", "is not a release name"),
        ("nosuchserver@0.5.0", "unknown profile 'nosuchserver@0.5.0'"),
        ("openai@1.0", "profile 'openai' has no timeline"),
    ],
)
def test_a_bad_release_is_a_profile_error_that_says_what_is_valid(name: str, message: str) -> None:
    with pytest.raises(ProfileError, match=re.escape(message)):
        get_profile(name)


def test_dated_profile_names_are_views_of_the_timeline() -> None:
    for alias, release in TIMELINES["vllm"].aliases.items():
        view = dataclasses.replace(get_profile(f"vllm@{release}"), name=alias)
        assert PROFILES[alias] == view
    assert split_release("vllm@0.26.0") == ("vllm", "0.26.0") and split_release("vllm") == ("vllm", None)


def test_ollama_reports_the_release_it_emulates() -> None:
    assert get_profile("ollama@0.11.3").version == "0.11.3"
    assert get_profile("ollama@0.11.3").tool_call_error == "v0.11.3"
    assert get_profile("ollama@0.11.5").tool_call_error == "current"


def test_changes_between_two_releases_are_what_an_upgrade_brings() -> None:
    timeline = TIMELINES["vllm"]
    switches = [c.switch for c in timeline.changes_between("0.27.0", "0.32.0")]
    assert "stream_finish_keeps_length" in switches and "chat_parser" not in switches


def test_format_timeline_lists_every_change_with_its_sources() -> None:
    text = format_timeline(TIMELINES["vllm"])
    for change in TIMELINES["vllm"].changes:
        assert f"{change.switch}: {change.before!r} -> {change.after!r}" in text
        assert ", ".join(change.sources) in text
    assert "vllm-0.10.1 = vllm@0.10.1+gptoss" in text


def test_cli_prints_a_timeline_and_refuses_an_unknown_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--timeline", "vllm"]) == 0
    out = capsys.readouterr().out
    assert "vllm-project/vllm#53269" in out and "[UNVERIFIED]" in out
    assert main(["profiles", "--timeline", "ollama", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["server"] == "ollama" and data["changes"][0]["sources"][0] == "ollama/ollama#11781"
    assert main(["profiles", "--timeline", "tgi"]) == 2
    assert "no timeline for 'tgi'" in capsys.readouterr().err


def test_a_misspelt_profile_name_gets_a_suggestion():
    """Newcomer report: ``--profile vlm`` named no candidate while misspelt switches did."""
    from mockoss.profiles.registry import ProfileError, get_profile

    with pytest.raises(ProfileError, match=r"unknown profile 'vlm' \(did you mean 'vllm'\?\)"):
        get_profile("vlm")
    with pytest.raises(ProfileError, match=r"unknown profile 'olama@0.11.3' \(did you mean 'ollama'\?\)"):
        get_profile("olama@0.11.3")


@pytest.mark.parametrize("name", ["sglang@@0.5.2", "sglang@0.5.2@x", "sglang@ 0.5.2", "sglang@v0.5.2", "vllm@0.33.0 ", "vllm@latest"])
def test_a_malformed_release_name_is_refused_with_the_releases_listed(name):
    # Newcomer report (second session): these resolved silently to some release.
    with pytest.raises(ProfileError) as info:
        get_profile(name)
    assert "is not a release name" in str(info.value) and "releases:" in str(info.value)
    if "@v" in name:
        assert "(did you mean sglang@0.5.2?)" in str(info.value)  # the PROFILE@VERSION form of the other hints


def test_every_listed_release_of_every_timeline_is_a_valid_release_name():
    for server in TIMELINES:
        timeline = TIMELINES[server]
        for release in timeline.ordered_releases:
            if release.name in timeline.renamed:  # resolves too, with a ReleaseWarning saying what to pin
                with pytest.warns(ReleaseWarning, match=f"pin {server}@{timeline.renamed[release.name]}"):
                    assert get_profile(f"{server}@{release.name}").name == f"{server}@{release.name}"
                continue
            assert get_profile(f"{server}@{release.name}").name == f"{server}@{release.name}"
