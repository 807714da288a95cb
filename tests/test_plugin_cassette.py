"""Per-test cassettes (@pytest.mark.mockoss(cassette=...), --mockoss-record-mode): recorded once
through a pass-through mockoss from a "real" server (here another mockoss), replayed offline."""

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

TEST = """
import openai
import pytest

@pytest.mark.mockoss(cassette=True)
def test_answer(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 2 + 2?"}])
        stream = client.chat.completions.create(
            model=mockoss.model, messages=[{"role": "user", "content": "Stream it"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert reply.choices[0].message.content == "4" and text == "4"
    assert len(mockoss.requests) == 2
"""


def test_record_once_then_replay_offline(pytester, cassette_upstream):
    pytester.makepyfile(test_calc=TEST)
    missing = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    missing.assert_outcomes(errors=1)
    missing.stdout.fnmatch_lines(["*cassette *cassettes/test_calc/test_answer.yaml does not exist; record it once*"])

    recorded = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockoss-record-mode", "once", "--mockoss-real", cassette_upstream.url
    )
    recorded.assert_outcomes(passed=1)
    assert len(cassette_upstream.server.requests) == 2
    cassette = pytester.path / "cassettes" / "test_calc" / "test_answer.yaml"
    text = cassette.read_text()
    assert text.startswith("# Replay it byte for byte with:") and "authorization" not in text.lower()

    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # offline: no --mockoss-real
    replayed.assert_outcomes(passed=1)
    assert len(cassette_upstream.server.requests) == 2  # nothing reached the real server


MISS = """

@pytest.mark.mockoss(cassette="test_answer")
def test_other_question(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        with pytest.raises(openai.BadRequestError, match="does not match"):
            client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 3 + 3?"}])
"""


def test_a_request_the_cassette_does_not_hold_fails_with_the_nearest_recorded_one(pytester, cassette_upstream):
    pytester.makepyfile(test_calc=TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", "--mockoss-real", cassette_upstream.url)
    pytester.makepyfile(test_calc=TEST + MISS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E   AssertionError: mockoss: 1 request the scenario did not answer:",
            "    - POST /v1/chat/completions -> 400: scenario 'test_answer': no rule answered (request #0)",
            "        mockoss: no rule of scenario 'test_answer' answers this chat request (model 'openai/gpt-oss-20b', turn 1):",
            (
                "        rule #1 (scenario *cassettes/test_calc/test_answer.yaml:6): last user message 'What is 3 + 3?' "
                "does not match /\\AWhat\\ is\\ 2\\ \\+\\ 2\\?\\Z/"
            ),
            "        rule #2 (scenario *cassettes/test_calc/test_answer.yaml:*): *",
            "        nearest recorded request: rule #1 (scenario *cassettes/test_calc/test_answer.yaml:6)",
            "          last user message: What is [-2-]{+3+} + [-2-]{+3+}?",
        ],
        consecutive=True,
    )


NEW = """

@pytest.mark.mockoss(cassette="test_answer")
def test_other_question(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        old = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 2 + 2?"}])
        new = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 3 + 3?"}])
    assert old.choices[0].message.content == new.choices[0].message.content == "4"
"""


def test_new_episodes_replays_what_is_recorded_and_appends_the_rest(pytester, cassette_upstream):
    """vcrpy's new_episodes (kevin1024/vcrpy docs/usage.rst, "new_episodes"), as pytest-recording passes it on."""
    pytester.makepyfile(test_calc=TEST)
    real = ("--mockoss-real", cassette_upstream.url)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", *real).assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_calc" / "test_answer.yaml"
    before = cassette.read_text()
    assert before.count("\n- match:") == 2 and len(cassette_upstream.server.requests) == 2

    pytester.makepyfile(test_calc=TEST + NEW)
    episodes = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "new_episodes", *real)
    episodes.assert_outcomes(passed=2)
    # only "What is 3 + 3?" reached the real server; the recorded exchanges were replayed
    assert [r.messages[-1]["content"] for r in list(cassette_upstream.server.requests)[2:]] == ["What is 3 + 3?"]
    after = cassette.read_text()
    assert after.startswith(before.rstrip("\n")) and after.count("\n- match:") == 3
    assert "What\\ is\\ 3\\ \\+\\ 3" in after and "authorization" not in after.lower()

    offline = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # both tests replay offline now
    offline.assert_outcomes(passed=2)
    assert len(cassette_upstream.server.requests) == 3


def test_new_episodes_needs_a_real_server_to_record(pytester, cassette_upstream):
    pytester.makepyfile(test_calc=TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", "--mockoss-real", cassette_upstream.url)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "new_episodes")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*new_episodes records what cassette * does not hold and needs a real server*"])
    assert "def cassette_fixture" not in result.stdout.str()  # the message alone, not the plugin's source


def test_recording_a_missing_cassette_needs_a_real_server_and_says_only_that(pytester):
    pytester.makepyfile(test_calc=TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*recording cassette * (--mockoss-record-mode once) needs a real server: add --mockoss-real URL*"])
    assert "def cassette_fixture" not in result.stdout.str() and "plugin.py" not in result.stdout.str()


def test_record_mode_choices_in_help(pytester):
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--mockoss-record-mode={none,once,new_episodes,all,rewrite}*"])
