"""The ``mlx-lm`` profile against goldens recorded from mlx-lm 0.32.2's own server code.

``tests/golden/mlx-lm-0.32.2/replies.jsonl.gz`` holds what the 0.32.2 wheel's ``server.APIHandler``
(``ml-explore/mlx-lm@v0.32.2:mlx_lm/server.py``, with its ``BPEStreamingDetokenizer`` and
``make_text_state_machine``; only the model replaced by a generator replaying the scripted tokens)
answered for every completion of the built-in scenarios: chat and text completion, streamed
(chat with ``include_usage``; text completions with ``stream_options: {}``, the stream mlx-lm cuts
before ``[DONE]``) and not, with no limit (the server's 512) and a 7-token limit. Recorded by
``tools/mlxlm_diff.py --record`` in the scratch venv its docstring describes (mlx[cpu]), ids and
``created`` normalised. Here each recorded request body goes to ``MockServer(profile="mlx-lm")``
in process (request validation, the request view, the profile) with the scenario step's completion,
and the reply must be byte-identical after the same normalisation; so a change under the profile
(its detokenizer, wire format, the tokenizer, ``Completion.emit``) that moves a byte fails here in
CI, where mlx cannot run. A scenario whose completions changed fails as stale until re-recorded.

The prompt token count is the recorder's stand-in prompt length (the header's ``prompt_tokens``),
set the way the HTTP layer hands a precounted count to the server: mockoss counts prompts with its
Harmony rendering, not mlx-lm's chat template (see the profile's docstring), so it is not compared.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from golden_support import read_replies, scenario_step

from mockoss.endpoints import endpoint_for_path
from mockoss.profiles.mlxlm import MlxLmProfile
from mockoss.scenario.loader import builtin_names, load_named
from mockoss.server.core import PRECOUNTED_PROMPT_TOKENS, MockServer

GOLDEN = Path(__file__).resolve().parent / "mlx-lm-0.32.2" / "replies.jsonl.gz"
RERECORD = (
    "re-record with tools/mlxlm_diff.py WHEEL_DIR STUB_DIR --record tests/golden/mlx-lm-0.32.2 "
    "in the mlx[cpu] scratch venv (the command is in the tool's docstring)"
)
# tools/mlxlm_diff.py's normalisation: mlx-lm's ids (uuid4 after the prefix) and created seconds
_ID = re.compile(rb'"(chatcmpl|cmpl)-[0-9a-f-]{32,36}"')
_CREATED = re.compile(rb'"created": \d+')
#: The request shapes the recorder sends per completion: (path, streamed, max_tokens).
SHAPES = {(path, stream, limit) for path in ("/v1/chat/completions", "/v1/completions") for stream in (False, True) for limit in (None, 7)}


def _norm(raw: bytes) -> bytes:
    return _CREATED.sub(b'"created": 0', _ID.sub(b'"ID"', raw))


@cache
def _records() -> tuple[dict, tuple[dict, ...]]:
    return read_replies(GOLDEN)


def _cases() -> list[str]:
    return sorted({r["case"] for r in _records()[1]})


_step = scenario_step


@pytest.fixture(scope="module")
def server() -> MockServer:
    return MockServer(profile="mlx-lm")


def test_the_goldens_cover_every_scenario_completion_and_request_shape():
    header, records = _records()
    current = {f"{name}#{i}" for name in builtin_names() for i, step in enumerate(load_named(name).steps) if step.completion is not None}
    missing, extra = sorted(current - set(_cases())), sorted(set(_cases()) - current)
    assert not missing and not extra, f"goldens stale: scenario completions without a golden {missing[:5]}, goldens without a completion {extra[:5]}; {RERECORD}"
    for case in _cases():
        shapes = {(r["path"], r["body"]["stream"], r["body"].get("max_tokens")) for r in records if r["case"] == case}
        assert shapes == SHAPES, f"{case}: recorded request shapes {sorted(shapes, key=str)}"
    assert header["system_fingerprint"] == MlxLmProfile().system_fingerprint, f"the profile's default system_fingerprint changed; {RERECORD}"


@pytest.mark.parametrize("case", _cases())
def test_mockserver_matches_mlx_lm_golden(case, server, record_property):
    header, records = _records()
    mine = [r for r in records if r["case"] == case]
    step = _step(case)
    assert step.completion is not None and list(step.completion.tokens) == mine[0]["tokens"], f"{case}: the completion's tokens changed; goldens stale, {RERECORD}"
    different = []
    token = PRECOUNTED_PROMPT_TOKENS.set(header["prompt_tokens"])
    try:
        for r in mine:
            endpoint = endpoint_for_path(r["path"])
            assert endpoint is not None, r["path"]
            # respond(step=...): the scenario step's completion answers, whatever its rules match
            reply, _ = server.respond(endpoint.name, json.dumps(r["body"]).encode(), {}, step=step)
            got = _norm(reply.body if not reply.streamed else b"".join(reply.frames)).decode()
            if reply.status != 200 or got != r["reply"]:
                different.append((r["path"], r["body"], reply.status, r["reply"][:300], got[:300]))
    finally:
        PRECOUNTED_PROMPT_TOKENS.reset(token)
    record_property("golden", {"directory": "mlx-lm-0.32.2", "identical": len(mine) - len(different), "known": 0, "different": len(different)})
    assert different == []
