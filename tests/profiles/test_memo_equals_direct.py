"""A reply made from a completion's memos is the reply made without them, on every profile.

Every profile memoises what a scripted answer's replies are built from on ``completion._memo``
(parser traces, plans, byte templates with the request's ids left as markers or slots:
:mod:`mockoss.profiles.replay`), keyed by the request's shape. Two servers get the same requests
in the same order (so the same request indexes, hence the same ids): one as it runs, the other
with every memo and every request-data cache emptied before each request, so that everything is
built afresh. Their replies
must be byte-identical. The scripted texts hold what templates are made of (``mockoss-``,
marker-shaped text raw and JSON-escaped, the OpenAI profile's ASCII slots, ``%`` sequences,
private-use characters, a NUL), so a marker that collides with an answer, or a memo key that
misses a field that changes the reply, shows here (issue 9, eighth session: the memos were added
to every profile; its review fuzzed this on 66,000 request pairs).
"""

from __future__ import annotations

import json

import pytest

import mockoss.harmony.completion as completion_module
from mockoss.harmony.completion import clear_completion_cache
from mockoss.harmony.prompt.caches import clear_caches
from mockoss.profiles.registry import PROFILES
from mockoss.server.core import MockServer

TEXTS = [
    "mockoss-",
    "mockoss-id:0 mockoss-val:3",
    "\\u0000mockoss-id:0\\u0000",
    "~mockoss~slot~00000000000000001~",
    "%s %(x)s %% \ue000\U000f0000\U000f00a1",
    "x\x00y",
]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


@pytest.fixture
def memos(monkeypatch):
    """Every :class:`~mockoss.harmony.completion.Memo` made while the test runs."""
    made: list = []  # (Memo has __slots__ without __weakref__; the test's memos are few)
    real = completion_module.Memo.__init__

    def tracked(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(completion_module.Memo, "__init__", tracked)
    clear_completion_cache()  # completions made before the test hold untracked memos
    yield made
    clear_completion_cache()


def _scenario(tmp_path, text: str, call: bool) -> str:
    if call:
        messages = [
            {"channel": "analysis", "content": text},
            {
                "channel": "commentary",
                "recipient": "functions.get_weather",
                "content_type": "<|constrain|>json",
                "content": json.dumps({"city": text}),
            },
        ]
    else:
        answer = " ".join(["word"] * 150) + f" {text} " + " ".join(["more"] * 150)
        messages = [{"channel": "analysis", "content": f"think {text}"}, {"channel": "final", "content": answer}]
    path = tmp_path / f"s{call}.json"
    path.write_text(
        json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}], "when_exhausted": "repeat_last"})
    )
    return str(path)


def _bodies(endpoint: str, model: str, text: str):
    kind = endpoint.split(".")[-1]
    for stream in (False, True):
        for limit in (None, 40):
            if kind == "chat":
                body = {"model": model, "messages": [{"role": "user", "content": f"hi {text}"}], "tools": TOOLS}
                key = "max_tokens"
            elif kind == "responses":
                body = {"model": model, "input": "hi", "instructions": f"keep {text}", "tools": RESPONSES_TOOLS}
                key = "max_output_tokens"
            else:
                body, key = {"model": model, "prompt": "hi", "max_tokens": 2000}, "max_tokens"
            if limit is not None:
                body[key] = limit
            if endpoint.startswith("ollama."):
                body.pop("max_tokens", None)
                body["options"] = {"num_predict": limit or 2000}
            yield json.dumps({**body, "stream": stream}).encode()


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_memoised_replies_are_the_replies_built_afresh(tmp_path, memos, profile):
    compared = 0
    for text in TEXTS:
        for call in (False, True):
            path = _scenario(tmp_path, text, call)
            memoised, afresh = MockServer(scenario=path, profile=profile), MockServer(scenario=path, profile=profile)
            model = memoised.info.served_model_names[0]
            for endpoint in sorted(PROFILES[profile].endpoints):
                for raw in _bodies(endpoint, model, text):
                    for _ in range(2):  # the second from the memo
                        want = memoised.respond(endpoint, raw, {})[0]
                        for memo in list(memos):
                            memo.clear()
                        clear_caches()  # and the request-data caches (vLLM's echo templates, tool declarations, grammars)
                        got = afresh.respond(endpoint, raw, {})[0]
                        assert (got.status, got.body, tuple(got.frames), got.abort, got.headers, got.log) == (
                            want.status,
                            want.body,
                            tuple(want.frames),
                            want.abort,
                            want.headers,
                            want.log,
                        ), f"{profile} {endpoint} {text!r} call={call} {raw[:120]!r}"
                        compared += 1
    assert compared >= 96
