"""The recorder's secret scrubbing is linear in the text and keeps big scans off the server's GIL
(issue 9 review, eighth session, finding 1: a 2 MB lockfile-shaped prompt took 11 s with
``--record``, another recorded client waited 10 s and a ``/health`` probe 858 ms).

No timings here: the tests count the whole-text searches made (one per value before), check
where big scans ran, and compare the one-pass search against the obvious one.
"""

from __future__ import annotations

import random
import string

from mockoss.upstream import detectors, scrub
from mockoss.upstream.occurrences import occurrences
from mockoss.upstream.scrub import WORKER_CHARS, Scrubber, find_secrets


class _CountingText(str):
    """A text that counts the :meth:`str.find` calls made on it (each one a search of the text)."""

    finds = 0

    def find(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        type(self).finds += 1
        return super().find(*args, **kwargs)


def _tokens(count: int, seed: int, size: int = 40) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(size)) for _ in range(count)]


def test_found_values_are_located_without_one_search_per_value() -> None:
    """300 distinct high-entropy tokens: the text was searched once per token (300 finds, and
    per token found again in ``spans``); now no whole-text search per value at all."""
    tokens = _tokens(300, seed=1)
    text = _CountingText("lockfile:\n" + "\n".join(f'"integrity": "sha512-{t}"' for t in tokens))
    assert len(text) < WORKER_CHARS  # scanned in this process, where the calls can be counted
    _CountingText.finds = 0
    found = find_secrets(text)
    assert len(found) == 300
    spans = Scrubber().spans(text, {t: "high-entropy-string" for t in tokens})
    assert [text[s:e] for s, e, _ in spans] == [f"sha512-{t}" for t in tokens]
    assert _CountingText.finds < 10, _CountingText.finds


def test_stream_frames_are_not_searched_once_per_known_value(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``replace_all`` searched every frame for every known value (4,000 frames x 2,000 values in
    the review); now the frames are searched together, once."""
    tokens = _tokens(200, seed=2)
    known = {t: "high-entropy-string" for t in tokens}
    frames = [_CountingText(f"data: {{'delta': '{i}'}}") for i in range(100)] + [
        _CountingText(f"data: echo {tokens[7]}")
    ]
    _CountingText.finds = 0
    searched = []  # the texts the known values are searched in: the frames joined, once
    real = scrub._known_spans
    monkeypatch.setattr(scrub, "_known_spans", lambda text, values: searched.append(text) or real(text, values))
    out = Scrubber().replace_all(frames, known)
    assert _CountingText.finds < len(tokens)
    assert len(searched) == 1 and all(frame in searched[0] for frame in frames)
    assert out[-1] == "data: echo [REDACTED:high-entropy-string:1]"
    assert out[:100] == list(frames[:100])


def test_occurrences_match_a_search_at_every_position() -> None:
    """The gram index finds exactly the occurrences a search at every position finds, overlapping
    ones included: few-letter alphabets (values sharing grams, repeating themselves, one inside
    another), short values (searched one by one) and long ones (indexed)."""
    rnd = random.Random(3)
    for _ in range(300):
        alphabet = rnd.choice(["ab", "abc", "abcdefgh", string.ascii_letters])
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 400)))
        values = {}
        for _ in range(rnd.randint(1, 12)):
            if text and rnd.random() < 0.7:
                start = rnd.randrange(len(text))
                value = text[start : start + rnd.randint(1, 60)]
            else:
                value = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 40)))
            values.setdefault(value, f"kind{len(values)}")
        expected = {
            (at, at + len(value), kind)
            for value, kind in values.items()
            for at in range(len(text))
            if text.startswith(value, at)
        }
        assert set(occurrences(text, values)) == expected
        assert len(occurrences(text, values)) == len(expected)  # each occurrence once


def test_big_texts_are_scanned_in_the_worker_process() -> None:
    """A text of ``WORKER_CHARS`` or more is scanned in the helper process (detect-secrets' single
    regex calls over megabytes held the server's GIL for up to ~0.5 s each), with the same spans
    as a scan here; its known values are located there too."""
    tokens = _tokens(2000, seed=4)
    text = "\n".join(f'    "node_modules/p{i}": {{"integrity": "sha512-{t}=="}},' for i, t in enumerate(tokens))
    assert len(text) >= WORKER_CHARS
    asked = scrub._worker.asked
    found = find_secrets(text)
    assert scrub._worker.asked == asked + 1
    assert found == detectors.find_spans(text, True)
    known = {t: "high-entropy-string" for t in tokens}
    assert scrub._known_spans(text, known) == occurrences(text, known)
    assert scrub._worker.asked == asked + 2


def test_a_failing_worker_leaves_the_scan_to_this_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A worker that cannot start (or dies) costs nothing but the GIL: the scan runs here."""
    broken = scrub.ScanWorker("import sys; sys.exit(3)")
    monkeypatch.setattr(scrub, "_worker", broken)
    text = "key sk-proj-" + "Ab1" * 20 + " " + "x" * WORKER_CHARS
    answers = []  # each ask's answer: None, the worker could not answer
    real_ask = broken.ask
    monkeypatch.setattr(broken, "ask", lambda *args: answers.append(real_ask(*args)) or answers[-1])
    assert find_secrets(text) == detectors.find_spans(text, True) != []
    assert answers == [None] and broken.asked == 0  # asked once, failed, scanned here


def test_safety_net_replaces_a_value_holding_another_whole() -> None:
    """The recorder's last pass (``replace_values``) replaces every known value in one pass. The
    placeholders are numbered in the known values' order, occurring or not (as the value-by-value
    ``str.replace`` did); where one known value holds another, the longer is replaced whole (the
    value-by-value pass replaced the shorter inside it and left the rest of the longer one)."""
    short, long = "Zq8vW2mN4xR7kT1pL9sD", "Zq8vW2mN4xR7kT1pL9sDextra0Yh3Gf6Jc"
    known = {"absent-value-0123456789": "api-key", short: "high-entropy-string", long: "high-entropy-string"}
    scrubber = Scrubber()
    out = scrubber.replace_values(f"a {long} b {short} c", known)
    assert out == "a [REDACTED:high-entropy-string:3] b [REDACTED:high-entropy-string:2] c"
    assert "extra0Yh3Gf6Jc" not in out


def test_a_small_exchange_is_not_held_behind_a_big_prompt_s_scan(serve, http, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The writer renders steps one after another: a small exchange finishing while a 2 MB
    prompt's step was being scanned waited for that scan (10 s in the review). Here the big
    prompt's scan is held until the small exchange has its answer; the small step is written
    first (``scan_first``)."""
    import threading

    import httpx
    import yaml
    from upstream_helpers import CHAT, completion_step, scenario

    from mockoss.server.core import MockServer
    from mockoss.upstream import Recorder

    entered, release = threading.Event(), threading.Event()
    cached = scrub._cached

    def held(text: str, entropy: bool):  # type: ignore[no-untyped-def]
        if len(text) >= WORKER_CHARS and not release.is_set():
            entered.set()
            release.wait(20)
        return cached(text, entropy)

    monkeypatch.setattr(scrub, "_cached", held)
    mock = serve(
        MockServer(scenario=scenario(completion_step(), completion_step()), recorder=Recorder(tmp_path, "order"))
    )
    big = {**CHAT, "messages": [{"role": "user", "content": " ".join(_tokens(2000, seed=5))}]}
    answers: list[int] = []
    client = threading.Thread(
        target=lambda: answers.append(http.post(mock.url + "/v1/chat/completions", json=big).status_code)
    )
    client.start()
    try:
        assert entered.wait(20)
        with httpx.Client(timeout=8) as other:
            assert other.post(mock.url + "/v1/chat/completions", json=CHAT).status_code == 200
        assert not answers  # the big one still waits for its scan
    finally:
        release.set()
        client.join(30)
    assert answers == [200]
    steps = yaml.safe_load((tmp_path / "order.yaml").read_text())["steps"]
    assert [step["note"].split(":", 1)[1].strip()[:8] for step in steps] == ["Hi there", "[REDACTE"]


def test_body_scans_before_queueing_use_their_own_helper_process() -> None:
    """``scan_first``'s scans run in a helper process of their own: a body's scan of seconds does
    not hold the writer's helper, which renders the steps already scanned."""
    from concurrent.futures import Future

    raw = ('{"messages": [{"role": "user", "content": "' + " ".join(_tokens(2000, seed=6)) + '"}]}').encode()
    queued: Future[None] = Future()
    writer, prescan = scrub._worker.asked, scrub._prescan_worker.asked

    def submit() -> Future[None]:
        queued.set_result(None)
        return queued

    scrub.scan_first(raw, submit).result(timeout=60)
    assert scrub._prescan_worker.asked == prescan + 1
    assert scrub._worker.asked == writer


def test_warm_starts_the_helper_before_its_first_question() -> None:
    """``scan_first`` warms the writer's helper while the body is scanned: its start-up (a Python
    interpreter importing mockoss) is not added to the render of the step that waits for it."""
    worker = scrub.ScanWorker("import sys; sys.stdin.buffer.read()")
    try:
        worker.warm()
        assert worker._process is not None and worker._process.poll() is None
        started = worker._process
        worker.warm()  # already running: the same process
        assert worker._process is started
    finally:
        worker.stop()
