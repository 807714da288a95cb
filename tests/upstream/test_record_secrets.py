"""Secret-free recordings: each planted kind of secret is absent from every recorded file, in mock,
pass-through and raw mode, with and without --redact and --record-match (mockoss/upstream/scrub.py)."""

import pytest
import yaml
from upstream_helpers import CHAT, MODEL, completion_step, scenario, stopped

from mockoss.scenario.loader import load_scenario
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder, Upstream
from mockoss.upstream.scrub import find_secrets

#: One of each kind (made-up values of the providers' published shapes).
SECRETS = {
    "openai": "sk-proj-Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zT3BlbkFJAb3dEf5hIj7kLm9nOp1q",
    "anthropic": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-AbCdEfGh",
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google_api_key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "bearer": "9f8eQ7d6c5Zb4a39X281706f5",
    "github": "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    "high_entropy": "7Gq2Xk9Lp4Vz8Rt1Wm6Ny3Bc5Hd0Fj2Ks7Qa",
}
PROMPT = (
    f"Configure the client. OPENAI key {SECRETS['openai']}, Anthropic {SECRETS['anthropic']}, "
    f"aws_access_key_id={SECRETS['aws_access_key_id']} aws_secret_access_key={SECRETS['aws_secret_access_key']}, "
    f"Google {SECRETS['google_api_key']}, session {SECRETS['jwt']}, header Authorization: Bearer {SECRETS['bearer']}, "
    f"GitHub {SECRETS['github']}, and the token {SECRETS['high_entropy']}. Contact jane.doe@corp.example."
)
#: The model echoes the prompt: completions and replay bytes carry the secrets too.
ECHO = "<|channel|>final<|message|>You said: {{ last_user }}<|return|>"
RESPONSES = {"model": MODEL, "input": PROMPT, "instructions": f"Use {SECRETS['openai']}", "metadata": {"token": SECRETS["jwt"]}}


def _grep(directory):
    found = []
    for path in directory.rglob("*"):
        if path.is_file():
            text = path.read_text()
            found += [(path.name, kind) for kind, value in SECRETS.items() if value in text]
    return found


def _send(http, url):
    for stream in (False, True):
        assert http.post(url + "/v1/chat/completions", json={**CHAT, "stream": stream, "messages": [{"role": "user", "content": PROMPT}]}).status_code == 200
    assert http.post(url + "/v1/responses", json=RESPONSES).status_code == 200


def test_the_detector_finds_every_planted_kind():
    found = {PROMPT[start:end] for start, end, _ in find_secrets(PROMPT)}
    assert all(any(value in f or f in value for f in found) for value in SECRETS.values())


def test_ordinary_prose_and_ids_are_left_alone():
    prose = (
        "The quick brown fox jumps over the lazy dog. Internationalization matters; see /usr/local/lib/python3.11. "
        "Call get_weather for Tokyo, then summarise. Request 550e8400-e29b-41d4-a716-446655440000 finished."
    )
    assert find_secrets(prose) == []


@pytest.mark.parametrize(("redact", "match"), [(False, False), (True, True)])
def test_mock_mode_records_no_secret(serve, http, tmp_path, redact, match):
    recorder = Recorder(tmp_path, "mock", redact=redact, match=match)
    with stopped(serve(MockServer(scenario=scenario(completion_step(ECHO), name="echo"), recorder=recorder))) as mock:
        _send(http, mock.url)
    assert _grep(tmp_path) == []
    text = (tmp_path / "mock.yaml").read_text()
    assert "[REDACTED:" in text
    load_scenario(str(tmp_path / "mock.yaml"))  # still a valid scenario
    if redact:
        assert "jane.doe" not in text


def test_pass_through_and_raw_modes_record_no_secret(serve, http, tmp_path):
    echo = serve(MockServer(scenario=scenario(completion_step(ECHO), name="echo")))
    for mode in ("pass", "raw"):
        recorder = Recorder(tmp_path / mode, mode, match=mode == "raw")
        with stopped(serve(MockServer(upstream=Upstream(echo.url, mode=mode, model=MODEL if mode == "raw" else None), recorder=recorder))) as proxy:
            _send(http, proxy.url)
        assert _grep(tmp_path / mode) == [], mode
        data = yaml.safe_load((tmp_path / mode / f"{mode}.yaml").read_text())
        assert data.get("steps") or data.get("rules")
    # The upstream did echo them: the pass-through replay bytes were scrubbed, not empty.
    passed = (tmp_path / "pass" / "pass.yaml").read_text()
    assert passed.count("[REDACTED:") >= len(SECRETS)


def test_the_same_value_gets_the_same_placeholder_and_a_regex_still_matches(serve, http, tmp_path):
    recorder = Recorder(tmp_path, "rules", match=True)
    with stopped(serve(MockServer(scenario=scenario(completion_step(), name="plain"), recorder=recorder))) as mock:
        first = http.post(mock.url + "/v1/chat/completions", json={**CHAT, "messages": [{"role": "user", "content": PROMPT}]}).content
    rules = yaml.safe_load((tmp_path / "rules.yaml").read_text())["rules"]
    assert SECRETS["openai"] not in rules[0]["match"]["last_user"]
    replay = serve(MockServer(scenario=str(tmp_path / "rules.yaml")))
    again = http.post(replay.url + "/v1/chat/completions", json={**CHAT, "messages": [{"role": "user", "content": PROMPT}]})
    assert again.status_code == 200 and again.content == first
