"""The ``version`` switch beside an explicit release (t18 breaker #6).

``mockoss serve --profile vllm@0.26.0 --switch version=0.10.1`` started: ``GET /version`` said
0.10.1 while every reply was 0.26.0's, so a client gating on the version took the wrong path. The
switch is what a release sets (``Timeline.version_switch``: vLLM's ``/version``, Ollama's
``/api/version``, ``mockoss/profiles/{vllm,ollama}/releases.py``), so beside a release it may only
name a version the timeline resolves to the same behaviour; anything else is refused as a bad
switch value is (``ProfileError``: a usage error for ``serve``, a 400 for ``X-Mockoss-Switch``),
with what to use instead. On the bare profile it stays free: the way to make the server report a
local build's version, or a string whose parsing a client must survive, with the newest behaviour.
"""

from __future__ import annotations

import json

import pytest

from mockoss.cli import main
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.releases import TIMELINES
from mockoss.server.core import MockServer


@pytest.mark.parametrize(
    ("name", "version", "says"),
    [
        ("vllm@0.26.0", "0.10.1", "use vllm@0.10.1 for that release's behaviour"),
        ("vllm@0.26.0", "abc", "not a release of the vllm timeline"),
        ("vllm-0.10.1", "0.26.0", "contradicts the release 0.10.1+gptoss"),
        ("ollama@0.11.3", "0.33.0-rc2", "use ollama@0.33.0-rc2 for that release's behaviour"),
    ],
)
def test_a_version_contradicting_the_release_is_refused(name, version, says):
    with pytest.raises(ProfileError, match="contradicts the release") as refused:
        get_profile(name, {"version": version})
    assert says in str(refused.value)
    assert "leave the switch out" in str(refused.value)


def test_serve_refuses_it_with_a_usage_error(capsys, monkeypatch):
    def served(*args, **kwargs):
        raise AssertionError("mockoss serve started with a contradicting version")

    monkeypatch.setattr("mockoss.server.run.bind", served)
    args = ["serve", "--profile", "vllm@0.26.0", "--scenario", "clean-answer", "--port", "0"]
    assert main([*args, "--switch", "version=0.10.1"]) == 2
    err = capsys.readouterr().err
    assert "switch version='0.10.1' contradicts the release 0.26.0" in err and "Traceback" not in err


def test_the_header_gets_a_400():
    server = MockServer("clean-answer", profile="vllm@0.26.0")
    body = json.dumps({"messages": [{"role": "user", "content": "Hi"}]}).encode()
    reply = server.respond("chat", body, {"x-mockoss-switch": "version=0.10.1"})[0]
    assert reply.status == 400
    assert "contradicts the release 0.26.0" in reply.body.decode()
    assert server.respond("chat", body, {"x-mockoss-switch": "version=0.26.0"})[0].status == 200


def test_a_version_with_the_release_s_behaviour_is_taken():
    """The release's own name, and a version the timeline gives the same behaviour (one past
    the newest listed release: the newest behaviour)."""
    newest = TIMELINES["vllm"].newest
    assert get_profile("vllm@0.26.0", {"version": "0.26.0"}).version == "0.26.0"
    assert get_profile(f"vllm@{newest}", {"version": "99.0.0"}).version == "99.0.0"


@pytest.mark.parametrize(("profile", "path"), [("vllm", "/version"), ("ollama", "/api/version")])
def test_the_bare_profile_reports_any_version_string(profile, path):
    for version in ("0.26.0", "0.34.0.dev3+cu128", "abc"):
        server = MockServer(profile=profile, switches={"version": version})
        assert json.loads(server.probe("GET", path).body) == {"version": version}
