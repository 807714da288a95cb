"""The ``sglang`` profile against answers recorded from SGLang 0.5.23's own serving code.

``tests/profiles/sglang-0.5.23.json`` holds what SGLang's FastAPI app answered (its
``OpenAIServingChat``, ``OpenAIServingResponses``, ``OpenAIServingCompletion`` and
``DetokenizerManager``, the engine replaced by scripted tokens; openai 2.8.0 and openai-harmony
0.0.4 as the wheel pins) for every completion of the built-in scenarios, asked each way
``tools/sglang_serving_diff.py`` asks (which wrote the file with ``--record``; it also checks 200
seeded token soups, which are not kept here). Each exchange keeps its request, the tokens the engine
emitted and the profile switches it is answered with, so the scenario library can change without
touching this check. Ids and timestamps are compared by position (an id's reuse is compared, its
random digits are not); a stream SGLang dropped mid-way must be dropped by mockoss too. The
recordings stubbed mockoss's prompt count in for the chat template, so they are answered with
``tool_description_required`` off (``tests/golden/sglang-0.5.23`` runs the model's own template).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from mockoss.endpoints import endpoint_for_path
from mockoss.harmony import Completion
from mockoss.harmony.encoding import load_encoding
from mockoss.scenario.compiled import Step
from mockoss.server.core import MockServer

GOLDEN = Path(__file__).with_name("sglang-0.5.23.json")
_IDS = re.compile(r"\b(?:resp_|rs_|msg_|ft_|call_|ci_|ws_)?[0-9a-f]{32}\b")
_TIMES = re.compile(r'"(created|created_at)":\d+')
#: a token after the last one, so that a recorded length cut is a length cut again
_FILLER = 220


@cache
def exchanges() -> list[dict]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["exchanges"]


def normalise(text: str) -> str:
    seen: dict[str, str] = {}
    text = _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), text)
    return _TIMES.sub(r'"\1":0', text)


def answer(index: int, exchange: dict) -> tuple[int, str, bool]:
    """mockoss's ``(status, body, dropped)`` for one recorded exchange."""
    if exchange["method"] == "GET":
        reply = MockServer(profile="sglang", seed=index).probe("GET", exchange["path"])
        return reply.status, reply.body.decode(), False
    ids, cut = exchange["tokens"]
    tokens = (*ids, _FILLER) if cut else tuple(ids)
    completion = Completion(text=load_encoding().decode(list(tokens)), tokens=tokens)
    # Recorded with mockoss's prompt count stubbed in for the chat template (the tool's docstring),
    # so tools without a description were rendered: a deployment whose template can, the switch off.
    switches = {"tool_description_required": False, **exchange["switches"]}
    server = MockServer(profile="sglang", seed=index, switches=switches)
    raw = json.dumps(exchange["request"]).encode()
    reply, _ = server.respond(endpoint_for_path(exchange["path"]).name, raw, {}, step=Step(index=0, completion=completion, error=None))
    body = b"".join(reply.frames).decode() if reply.streamed else reply.body.decode()
    return reply.status, body, reply.abort is not None


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/completions", "/v1/models"])
def test_answers_match_sglangs_own_serving_code(path):
    rows = [(i, e) for i, e in enumerate(exchanges()) if e["path"].startswith(path)]
    assert rows, f"no recorded exchange for {path}"
    differ = []
    for index, exchange in rows:
        status, body, dropped = answer(index, exchange)
        if (status, normalise(body), dropped) != (exchange["status"], normalise(exchange["body"]), exchange["dropped"]):
            differ.append(f"{exchange['label']}: sglang {exchange['status']} {normalise(exchange['body'])[:300]!r}\n   mockoss {status} {normalise(body)[:300]!r}")
    assert not differ, f"{len(differ)} of {len(rows)} differ:\n" + "\n".join(differ[:5])


def test_the_record_covers_what_the_profile_claims():
    kinds = {e["path"] for e in exchanges()}
    assert {"/v1/chat/completions", "/v1/responses", "/v1/completions", "/v1/models"} <= kinds
    assert sum(e["dropped"] for e in exchanges()) >= 10  # streams SGLang drops mid-way are part of it
    assert any(e["status"] == 400 and e["path"] == "/v1/responses" for e in exchanges())
