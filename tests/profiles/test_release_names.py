"""``PROFILE@VERSION`` names that are not listed releases (newcomer findings, session 14).

* newer than the newest listed release (``ollama@9.9.9``): accepted with the newest behaviour and a
  :class:`ReleaseWarning` naming that release (it used to resolve silently);
* numbered unlike the server's releases (``ollama@0.113`` for 0.11.3, ``vllm@33``): a warning
  with a "did you mean";
* between two listed releases (``vllm@0.14.0``): accepted silently, as the listed release before it;
* every timeline change sits at a listed release: ``profiles --timeline vllm`` showed a change at
  0.15.0 (vllm-project/vllm#33402, the ``reasoning_content`` alias removed, merged 2026-01-30) and
  0.25.0 (vllm-project/vllm#47185) that its release list lacked, and llama.cpp's at b7756
  (ggml-org/llama.cpp#18462, #19476).
"""

from __future__ import annotations

import dataclasses
import socket
import warnings

import pytest

from mockoss.cli import main
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.releases import TIMELINES, ReleaseWarning, release_problem
from mockoss.server.core import MockServer


def _switches(profile) -> dict:
    """A profile's switch values, less its name and the version it reports (``/api/version``)."""
    skip = {"name", TIMELINES[profile.name.partition("@")[0]].version_switch}
    return {f.name: getattr(profile, f.name) for f in dataclasses.fields(profile) if f.name not in skip}


@pytest.mark.parametrize("server", list(TIMELINES))
def test_every_change_sits_at_a_listed_release(server):
    timeline = TIMELINES[server]
    listed = {r.name for r in timeline.releases}
    assert not {c.release for c in timeline.changes} - listed


def test_the_vllm_timeline_lists_the_release_of_its_0_15_0_change(capsys):
    assert main(["profiles", "--timeline", "vllm"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert ", 0.11.1, 0.15.0, 0.18.0," in head and ", 0.23.0, 0.25.0, 0.26.0," in head


@pytest.mark.parametrize(
    ("name", "newest"), [("ollama@9.9.9", "0.33.0-rc2"), ("vllm@0.33.1", "0.33.0"), ("llamacpp@b99999", "b10864")]
)
def test_a_version_newer_than_the_newest_release_warns_and_behaves_as_the_newest(name, newest):
    server = name.partition("@")[0]
    with pytest.warns(
        ReleaseWarning,
        match=rf"{name} is newer than {newest}, the newest {server} release mockoss knows: the behaviour of {server}@{newest} is used",
    ):
        profile = get_profile(name)
    assert _switches(profile) == _switches(get_profile(f"{server}@{newest}"))


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("ollama@0.113", "ollama@0.11.3"),
        ("vllm@33", "vllm@0.33.0"),
        ("vllm@0.11", "vllm@0.11.0"),
        ("vllm@0.33", "vllm@0.33.0"),
    ],
)
def test_a_version_numbered_unlike_the_releases_warns_with_did_you_mean(name, meant):
    with pytest.warns(ReleaseWarning, match=rf"is not numbered like .*\(did you mean {meant}\?\)"):
        get_profile(name)


@pytest.mark.parametrize(
    ("name", "as_"),
    [("vllm@0.14.0", "vllm@0.11.1"), ("vllm@0.15.0", "vllm@0.15.0"), ("lmstudio@0.4.2", "lmstudio@0.4.0")],
)
def test_a_version_between_releases_resolves_silently_as_the_release_before(name, as_):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _switches(get_profile(name)) == _switches(get_profile(as_))
    assert release_problem(TIMELINES[name.partition("@")[0]], name.partition("@")[2]) is None


def test_older_than_the_timeline_and_non_versions_are_still_errors():
    with pytest.raises(ProfileError, match="the vllm timeline starts at"):
        get_profile("vllm@0.1.0")
    with pytest.raises(ProfileError, match="is not a release name"):
        get_profile("llamacpp@latest")


def test_mock_server_warns_at_the_users_line_and_not_again_per_request():
    with pytest.warns(ReleaseWarning) as caught:
        server = MockServer(profile="ollama@9.9.9", scenario="clean-answer")
    assert caught[0].filename == __file__  # attributed to the caller, not to mockoss's internals
    # Requests resolve the profile again for their switches: no second warning (here an error).
    body = b'{"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "hi"}]}'
    reply = server.handle("chat", body, {"x-mockoss-switch": "eval_rate=60"})
    assert reply.status == 200, reply.body


def test_serve_prints_the_warning_as_one_line(capsys):
    with socket.socket() as taken:  # the port is busy: serve warns, then fails to listen and exits
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port), "--profile", "ollama@9.9.9"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("mockoss: warning: ollama@9.9.9 is newer than 0.33.0-rc2, the newest ollama release")
    assert not [line for line in err if "ReleaseWarning" in line]
    assert "cannot listen" in err[-1]


def test_serve_suggests_the_profile_name_as_the_marker_does(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--profile", "olama"])
    assert exited.value.code == 2
    assert "unknown profile 'olama' (did you mean 'ollama'?)" in capsys.readouterr().err
    with pytest.raises(ProfileError, match=r"unknown profile 'olama' \(did you mean 'ollama'\?\)"):
        get_profile("olama")  # the marker's and fixture's words


def test_explain_prints_the_warning_as_one_line_before_its_table(capsys):
    assert main(["explain", "clean-answer", "--profile", "ollama@9.9.9,ollama"]) == 0
    err = capsys.readouterr().err.splitlines()
    expected = (
        "mockoss: warning: ollama@9.9.9 is newer than 0.33.0-rc2, the newest ollama release mockoss knows: the "
        "behaviour of ollama@0.33.0-rc2 is used (mockoss cannot know what later releases changed)"
    )
    assert err == [expected]


_SWITCHED = (
    "version: 1\nswitches:\n  reasoning_format: none\n"
    "steps:\n  - completion: {messages: [{channel: final, content: hi}]}\n"
)


def test_a_release_warns_once_however_often_a_scenario_s_switches_are_checked(tmp_path):
    # switch_problem resolves the server's profile again for each scenario with switches: once at
    # MockServer(scenario=...), once per use_scenario, once per X-Mockoss-Scenario load (serve).
    (tmp_path / "switched.yaml").write_text(_SWITCHED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server = MockServer(
            profile="llamacpp@b99999", scenario=str(tmp_path / "switched.yaml"), scenario_dirs=[tmp_path]
        )
        server.use_scenario(str(tmp_path / "switched.yaml"))
        body = b'{"model": "gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}'
        for _ in range(2):
            (tmp_path / "switched.yaml").write_text(_SWITCHED + "# touched\n" * (_ + 1))  # read again
            reply = server.handle("chat", body, {"x-mockoss-scenario": "switched"})
            assert reply.status == 200, reply.body
    releases = [w for w in caught if issubclass(w.category, ReleaseWarning)]
    assert len(releases) == 1, [str(w.message) for w in releases]
    assert "llamacpp@b99999" in str(releases[0].message)


def test_the_real_mode_fixture_does_not_warn_again_when_switches_are_set():
    from mockoss.pytest_plugin._fixture import MockossFixture

    fixture = MockossFixture(server=None, url="http://127.0.0.1:9", api_key="k", model="m", profile=None, seed=None)
    fixture._profile_name = "llamacpp@b99999"  # resolved, and warned about, when the fixture was built
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fixture.switches(reasoning_format="none")
    assert not [w for w in caught if issubclass(w.category, ReleaseWarning)]
    assert fixture.unapplied == [("switches", {"reasoning_format": "none"})]


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("llamacpp@7756", "llamacpp@b7756"),  # llama.cpp's tags are bNNNN
        ("vllm@0.26.0rc1", "vllm@0.26.0-rc1"),  # vLLM's tag v0.26.0rc1 (PEP 440), a pre-release here after '-'
        ("ollama@0.11", "ollama@0.11.1"),  # older than the timeline: the first release it begins
        ("trtllm@2025.08", "trtllm@2025.08.27"),
    ],
)
def test_a_refused_release_name_gets_a_did_you_mean(name, meant):
    with pytest.raises(ProfileError, match=rf"\(did you mean {meant}\?\); releases: "):
        get_profile(name)
    get_profile(meant)  # the hint resolves


def test_a_refused_name_with_nothing_near_gets_no_hint():
    for name in ("llamacpp@latest", "vllm@0.1.0", "llamacpp@b100"):
        with pytest.raises(ProfileError) as refused:
            get_profile(name)
        assert "did you mean" not in str(refused.value)


def test_test_id_sessions_do_not_warn_again():
    """Each test-id session copies the server with its profile name: three sessions raised the
    warning three more times (a review of 46ccf99, which promised once)."""
    from starlette.testclient import TestClient

    from mockoss.server.app import create_app
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        server = MockServer(profile="llamacpp@b99999", scenario="clean-answer")
        with TestClient(create_app(server), base_url="http://127.0.0.1:8080") as http:
            for test_id in ("a", "b", "c"):
                chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                reply = http.post("/v1/chat/completions", json=chat, headers={"x-mockoss-test-id": test_id})
                assert reply.status_code == 200, reply.text
    assert [type(w.message) for w in caught] == [ReleaseWarning]
