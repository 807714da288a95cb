"""``append_rules`` (``--mockoss-record-mode new_episodes`` appending to a cassette) under
concurrent recorders: two processes appending to one cassette file at once, as two ``pytest -n 2``
workers whose tests share a cassette do. Nothing is lost, the file stays a valid scenario that
replays every exchange, and the served names of every appended recording reach its first line
(eighteenth session, task C2 item 3). README "Cassettes"; the lock is
:func:`mockoss.pytest_plugin._cassette_write.locked`.

The recordings are real ones: a pass-through mockoss with a ``Recorder(match=True)`` (the
cassette writer) in front of a mockoss standing in for the real server.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import httpx
import pytest

from mockoss.pytest_plugin._episodes import _with_names, append_rules
from mockoss.scenario.loader import load_scenario
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.steps import final, script
from mockoss.upstream import Recorder, Upstream

#: Recordings each of the two processes appends.
EACH = 8
NAMES = ["gpt-oss-20b", "openai/gpt-oss-20b"]


def _question(who: str, i: int) -> str:
    return f"What is {who} {i}?"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """``{"cassette": path, "a": [paths], "b": [paths]}``: a one-exchange cassette, and EACH
    one-exchange recordings per writer (``b``'s name the second model)."""
    folder = tmp_path_factory.mktemp("recordings")
    real = ThreadedServer(MockServer(scenario=script(final("4")), served_model_names=NAMES)).start()

    def record(name: str, question: str, model: str) -> Path:
        recorder = Recorder(folder, name, match=True)
        front = ThreadedServer(MockServer(upstream=Upstream(real.url), recorder=recorder)).start()
        try:
            body = {"model": model, "messages": [{"role": "user", "content": question}]}
            assert httpx.post(front.url + "/v1/chat/completions", json=body, timeout=30).status_code == 200
        finally:
            front.stop()
            recorder.close()
        return recorder.path

    try:
        made = {"cassette": record("cassette", "What is first?", NAMES[0])}
        for who, model in (("a", NAMES[0]), ("b", NAMES[1])):
            made[who] = [record(f"{who}{i}", _question(who, i), model) for i in range(EACH)]
    finally:
        real.stop()
    return made


def _append_all(cassette: str, recorded: list[str], start) -> None:
    start.wait(30)
    for path in recorded:
        assert append_rules(Path(cassette), Path(path)) == 1


def test_two_processes_appending_at_once_lose_nothing(recordings, tmp_path):
    cassette = tmp_path / "shared.yaml"
    cassette.write_text(recordings["cassette"].read_text())
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each, as an xdist worker
    start = context.Barrier(2)
    workers = [
        context.Process(target=_append_all, args=(str(cassette), [str(p) for p in recordings[who]], start))
        for who in ("a", "b")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [worker.exitcode for worker in workers] == [0, 0]

    text = cassette.read_text()
    load_scenario(str(cassette))  # valid: raises otherwise
    questions = ["What is first?"] + [_question(who, i) for who in "ab" for i in range(EACH)]
    for question in questions:
        assert text.count(f"\\A{question.replace(' ', chr(92) + ' ').replace('?', chr(92) + '?')}\\Z") == 1, question
    assert text.count("\n- match:") == len(questions)
    assert text.partition("\n")[0].endswith("--served-model-name gpt-oss-20b openai/gpt-oss-20b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.yaml"]  # no scratch file left

    replay = ThreadedServer(MockServer(scenario=str(cassette), served_model_names=NAMES)).start()
    try:
        for question in questions:
            body = {"model": NAMES[0], "messages": [{"role": "user", "content": question}]}
            reply = httpx.post(replay.url + "/v1/chat/completions", json=body, timeout=30)
            assert reply.json()["choices"][0]["message"]["content"] == "4", question
    finally:
        replay.stop()


PREFIX = "# Replay it byte for byte with: mockoss serve --scenario c.yaml --profile vllm --seed 0"


@pytest.mark.parametrize(
    ("first", "other", "merged"),
    [
        (f"{PREFIX} --served-model-name a", f"{PREFIX} --served-model-name b a", f"{PREFIX} --served-model-name a b"),
        (f"{PREFIX} --served-model-name a b", f"{PREFIX} --served-model-name b", f"{PREFIX} --served-model-name a b"),
        (
            f"{PREFIX} --served-model-name a",
            f"{PREFIX} --served-model-name 'my model'",
            f"{PREFIX} --served-model-name a 'my model'",
        ),
        ("# a hand-written cassette", f"{PREFIX} --served-model-name b", "# a hand-written cassette"),
    ],
)
def test_the_first_line_gains_the_appended_names(first, other, merged):
    assert _with_names(first, other) == merged
