"""The ``vllm-mlx`` profile against goldens recorded from vllm-mlx's own server.

``tests/golden/vllm-mlx-0.6.0/replies.jsonl.gz`` holds what the 0.6.0 wheel's ``server.app``
(FastAPI, its parsers, mlx-lm's detokenizer; only the engine scripted) answered for every
completion of the built-in scenarios, under ``--reasoning-parser gpt_oss --tool-call-parser
harmony`` and under no parsers, as chat and Responses (no tool, a tool, a tool with ``tool_choice:
"none"``) and text completion,
streamed and not, with no limit and a 9-token limit (``tools/vllm_mlx_diff.py --record``, in the
scratch venv described there; ids and ``created`` values normalised). Here each is answered by the
profile in process and compared byte for byte, so a change anywhere under it (the detokenizer it
shares with ``mlx-lm``, the tokenizer, ``Completion.emit``) that moves a byte fails. A scenario
whose tokens changed fails as stale until the goldens are re-recorded.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from pathlib import Path

import pytest
from golden_support import read_replies, scenario_step

from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.registry import get_profile
from mockoss.scenario.loader import builtin_names, load_named

GOLDEN = Path(__file__).resolve().parent / "vllm-mlx-0.6.0" / "replies.jsonl.gz"
_ID = re.compile(r'"((chatcmpl|call|cmpl)[_-][0-9a-f]{8}|(resp|rs|msg|fc)_[0-9a-f]{32})"')
_CREATED = re.compile(r'("created(?:_at)?": ?)\d+')


def _norm(text: str) -> str:
    return _CREATED.sub(r"\g<1>0", _ID.sub('"ID"', text))


@cache
def _records() -> tuple[dict, tuple[dict, ...]]:
    return read_replies(GOLDEN)


def _cases() -> list[str]:
    return sorted({r["case"] for r in _records()[1]})


def _completion(case: str):
    return scenario_step(case).completion


def _answer(record: dict, index: int, prompt_tokens: int) -> str:
    profile = dataclasses.replace(get_profile("vllm-mlx@0.6.0"), reasoning_parser=record["reasoning_parser"], tool_call_parser=record["tool_call_parser"])
    body = record["body"]
    ctx = RequestContext(ids=IdSource(0, index), created=0, prompt_tokens=prompt_tokens)
    kind = "responses" if "input" in body else "completions" if "prompt" in body else "chat"
    view = ENDPOINTS[kind].schema.model_validate(body).view(body["model"], body)  # the server's own request path
    reply = profile.chat(_completion(record["case"]), view, ctx) if kind == "chat" else profile.surface(kind, _completion(record["case"]), view, ctx)
    return _norm((reply.body if not reply.streamed else b"".join(reply.frames)).decode())


def test_the_goldens_cover_every_scenario_completion():
    current = {f"{name}#{i}" for name in builtin_names() for i, step in enumerate(load_named(name).steps) if step.completion is not None}
    assert set(_cases()) == current, "scenarios changed: re-record with tools/vllm_mlx_diff.py --record (see its docstring)"


@pytest.mark.parametrize("case", _cases())
def test_profile_matches_vllm_mlx_golden(case, record_property):
    header, records = _records()
    mine = [r for r in records if r["case"] == case]
    completion = _completion(case)
    assert completion is not None and list(completion.tokens) == mine[0]["tokens"], f"{case}: the completion changed; re-record"
    different = [(r["body"], r["reply"][:300]) for i, r in enumerate(mine) if _answer(r, i, header["prompt_tokens"]) != r["reply"]]
    record_property("golden", {"directory": "vllm-mlx-0.6.0", "identical": len(mine) - len(different), "known": 0, "different": len(different)})
    assert different == []
