"""The ``trtllm`` profile against goldens recorded from TensorRT-LLM's own serving modules.

``tests/golden/trtllm-2025.09.19/`` holds what TensorRT-LLM's own code answered (gzip'd JSON lines:
a header, then one exchange per line) for every completion of the built-in scenarios, in the
request shapes the three differential tools use, each recorded by that tool's ``--record DIR`` run
in the scratch venv its docstring describes (TensorRT-LLM's files are never committed here):

* ``chat.jsonl.gz``: ``tools/trtllm_adapter_diff.py``, ``harmony_adapter.py`` at
  ``NVIDIA/TensorRT-LLM@38134b130944ed5c037949456df20300126ec728`` (openai-harmony 0.0.4):
  ``handle_non_streaming_response`` and ``handle_streaming_response`` per engine response; whole
  and cut at 7 tokens, no tools / the called tools / ``tool_choice: "none"``, non-streamed and
  streamed with ``stream_interval`` 1 and 3. Verified by default against ``trtllm@2025.09.19``.
* ``responses.jsonl.gz``: ``tools/trtllm_responses_diff.py``, the autumn-2025 ``responses_utils.py``
  (``create_response``, ``process_streaming_events``) over that adapter; whole and cut, without and
  with the called tools, the same three stream shapes. The tool compares with ``trtllm`` (the
  profile answers ``/v1/responses`` as that period whatever the release); it is replayed here at
  ``trtllm@2025.09.19`` like the rest.
* ``completions.jsonl.gz``: ``tools/trtllm_completions_diff.py``, the Harmony-period
  ``completion_response_post_processor`` and ``completion_stream_post_processor`` fed mockoss's own
  engine emulation (so the engine and detokenizer are not what is pinned here, the mapping is);
  six request shapes, whole and cut, the three stream shapes. Verified by default against
  ``trtllm@2025.09.19`` (the newest post-processors, an optional second run of that tool, are not
  recorded).

The seeded random completions those tools also check are not recorded. Each exchange is answered
here by the profile at ``trtllm@2025.09.19`` in process and compared byte for byte after the same
normalisation the tool applies (ids and ``created`` values), so any change under the profile
(adapter rules, wire, the Harmony trace, the tokenizer, ``Completion.emit``) that moves a byte
fails, in CI, without TensorRT-LLM. A built-in scenario that has no golden, or whose tokens
changed, fails as stale until the goldens are re-recorded with the tool's ``--record``.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from golden_support import read_replies, scenario_step

from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ToolDecl
from mockoss.profiles.registry import get_profile
from mockoss.scenario.loader import builtin_names, load_named

RELEASE = "trtllm@2025.09.19"
DIRECTORY = Path(__file__).resolve().parent / "trtllm-2025.09.19"
_SERVE = "/work/trtllm-venv/src/tensorrt_llm/serve"  # where the scratch copies live on the recording machine
#: kind → (the tool that records it, its arguments before ``REFERENCE_PYTHON``).
TOOLS = {
    "chat": ("trtllm_adapter_diff.py", f"{_SERVE}/harmony_adapter.py"),
    "responses": ("trtllm_responses_diff.py", _SERVE),
    "completions": ("trtllm_completions_diff.py", f"{_SERVE}/postprocess_handlers_completion.py"),
}
RECORD = {kind: f"cd tools && python {tool} {source} REFERENCE_PYTHON --record ../tests/golden/trtllm-2025.09.19" for kind, (tool, source) in TOOLS.items()}
KINDS = tuple(RECORD)


def _stale(kind: str, why: str) -> str:
    return f"{kind} goldens are stale ({why}): re-record with `{RECORD[kind]}` (see that tool's docstring)"


# The tools' normalisations, restated (the tools are not importable from the tests).
_CHAT_IDS = [(re.compile(r"chatcmpl-[0-9a-f]{32}"), "chatcmpl-X"), (re.compile(r"call_[0-9a-f]{8}"), "call_X"), (re.compile(r'"created":\d+'), '"created":0')]
_RESPONSES_IDS = [
    (re.compile(r"(resp|rs|msg|fc|call|ws)_[0-9a-f]{32}"), r"\1_X"),
    (re.compile(r'"created_at":\d+'), '"created_at":0'),
]
_COMPLETION_ID = re.compile(r'"id":"((?:chatcmpl|cmpl)-[0-9a-f]*)"')


def _substitute(text: str, rules) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _ordinal_ids(text: str) -> str:
    seen: dict[str, str] = {}

    def ordinal(match: re.Match[str]) -> str:
        return f'"id":"{match[1].split("-")[0]}-{seen.setdefault(match[1], str(len(seen) + 1))}"'

    return _COMPLETION_ID.sub(ordinal, re.sub(r'"created":\d+', '"created":0', text))


@cache
def _records(kind: str) -> tuple[dict, tuple[dict, ...]]:
    path = DIRECTORY / f"{kind}.jsonl.gz"
    if not path.exists():
        pytest.fail(_stale(kind, f"{path.name} is missing"))
    return read_replies(path)


@cache
def _current() -> dict[str, tuple[int, ...]]:
    """``"name#step"`` → the step's completion tokens, for every built-in scenario completion."""
    out = {}
    for name in builtin_names():
        for index, step in enumerate(load_named(name).steps):
            if step.completion is not None:
                out[f"{name}#{index}"] = tuple(step.completion.tokens)
    return out


def _completion(case: str):
    return scenario_step(case).completion


def _context(record: dict, header: dict) -> RequestContext:
    return RequestContext(ids=IdSource(0, record["i"]), created=0, prompt_tokens=header["prompt_tokens"])


def _chat(record: dict, header: dict) -> str:
    profile = get_profile(RELEASE, {"stream_interval": record["interval"]})
    view = ChatRequestView(model=header["model"], tools=tuple(ToolDecl("function", t) for t in record["tools"]), tool_choice=record["tool_choice"],
                           stream=record["stream"], max_tokens=record["max_tokens"])
    reply = profile.chat(_completion(record["case"]), view, _context(record, header))
    return _substitute(b"".join(reply.frames).decode() if record["stream"] else reply.body.decode(), _CHAT_IDS)


def _responses(record: dict, header: dict) -> str:
    profile = get_profile(RELEASE, {"stream_interval": record["interval"]})
    body = record["body"]
    view = ENDPOINTS["responses"].schema.model_validate(body).view(body["model"], body)  # the server's own request path
    reply = profile.surface("responses", _completion(record["case"]), view, _context(record, header))
    if body["stream"]:
        text = "".join(f.decode() for f in reply.frames) + ("ABORT" if reply.abort else "")
    else:
        text = json.dumps({"error": json.loads(reply.body)["message"]}) if reply.status != 200 else reply.body.decode()
    return _substitute(text, _RESPONSES_IDS)


def _completions(record: dict, header: dict) -> str:
    profile = get_profile(RELEASE, {"stream_interval": record["interval"]})
    body = record["body"]
    view = ENDPOINTS["completions"].schema.model_validate(body).view(body["model"], body)
    reply = profile.surface("completions", _completion(record["case"]), view, _context(record, header))
    return _ordinal_ids(b"".join(reply.frames).decode() if body["stream"] else reply.body.decode())


ANSWER = {"chat": _chat, "responses": _responses, "completions": _completions}


def _params() -> list:
    return [pytest.param(kind, case, id=f"{kind}-{case}") for kind in KINDS for case in sorted(_current())]


@pytest.mark.parametrize("kind", KINDS)
def test_the_goldens_cover_every_scenario_completion(kind):
    header, records = _records(kind)
    assert header["generator"] == f"tools/{TOOLS[kind][0]} --record", header
    recorded = {r["case"] for r in records}
    assert not set(_current()) - recorded, _stale(kind, f"no golden for {sorted(set(_current()) - recorded)}")
    assert not recorded - set(_current()), _stale(kind, f"goldens for completions no longer built in: {sorted(recorded - set(_current()))}")


def test_the_goldens_stay_small():
    sizes = {p.name: p.stat().st_size for p in DIRECTORY.glob("*.jsonl.gz")}
    assert sorted(sizes) == sorted(f"{k}.jsonl.gz" for k in KINDS) and sum(sizes.values()) < 500_000, sizes


@pytest.mark.parametrize(("kind", "case"), _params())
def test_profile_matches_trtllm_golden(kind, case, record_property):
    header, records = _records(kind)
    mine = [r for r in records if r["case"] == case]
    assert mine, _stale(kind, f"no golden for {case}")
    assert all(tuple(r["tokens"]) == _current()[case] for r in mine), _stale(kind, f"the completion of {case} changed")
    different = []
    for record in mine:
        answer = ANSWER[kind](record, header)
        if answer != record["reply"]:
            at = next((i for i, (a, b) in enumerate(zip(record["reply"], answer)) if a != b), min(len(answer), len(record["reply"])))
            shape = {k: v for k, v in record.items() if k not in ("case", "i", "tokens", "reply")}
            different.append(f"{shape} from character {at}:\n  trtllm:  {record['reply'][max(0, at - 80):at + 160]!r}\n  mockoss: {answer[max(0, at - 80):at + 160]!r}")
    record_property("golden", {"directory": f"trtllm-2025.09.19/{kind}", "identical": len(mine) - len(different), "known": 0, "different": len(different)})
    assert not different, f"{case}: {len(different)} of {len(mine)} {kind} replies differ from TensorRT-LLM's\n" + "\n".join(different[:3])
