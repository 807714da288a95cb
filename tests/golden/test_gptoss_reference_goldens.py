"""The ``gptoss-reference`` profile against goldens recorded from the gpt-oss reference server itself.

``tests/golden/gptoss-reference-<version>/`` holds, per case of :mod:`mockoss.golden.cases`, what
openai/gpt-oss's ``gpt_oss.responses_api`` answered when served by uvicorn with a scripted
``infer_next_token`` (``tools/goldens/gptoss_reference.py``; the header names the commit). Each
exchange is answered in process by mockoss (``golden_support.answer``: a ``MockServer`` whose only
step is the golden's completion) and compared after normalisation, byte for byte: status, body or
every SSE frame, and whether the stream was cut (the golden's ``note: connection dropped …``
against mockoss's ``Reply.abort``). :data:`KNOWN` lists the explained exceptions; an entry that
matches nothing fails too. vLLM's ``known_differences.yaml`` does not apply here.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from golden_support import answer, server_for, stale

from mockoss.golden.normalise import dumps
from mockoss.golden.store import GoldenExchange, GoldenFile, golden_dirs, read_golden_dir
from mockoss.harmony import Completion

ROOT = Path(__file__).resolve().parent
GENERATOR = ROOT.parents[1] / "tools" / "goldens" / "gptoss_reference.py"

#: (case glob, exchange glob) → why mockoss differs from the reference server there.
KNOWN: dict[tuple[str, str], str] = {
    ("scenario-clean-tool-call-1", "variant-browser-tool"): (
        "A declared browser_search tool adds the browser tool's namespace (SimpleBrowserTool.tool_config) to the "
        "system message: input_tokens 482 against the profile's 86. The browser and code-interpreter tools need "
        "network backends or Docker and are not emulated (profile docstring); the output is identical."
    ),
}


@cache
def _directories() -> tuple[Path, ...]:
    return tuple(golden_dirs(ROOT, "gptoss-reference"))


@cache
def _goldens(directory: Path) -> tuple[GoldenFile, ...]:
    return tuple(read_golden_dir(directory))


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gptoss_reference_generator", GENERATOR)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _difference(golden_file: GoldenFile, golden: GoldenExchange) -> str | None:
    profile = golden_file.header["profile"]
    server = server_for(profile["name"], json.dumps(profile.get("switches") or {}, sort_keys=True))
    completion = Completion(text=golden_file.completion["text"], tokens=tuple(golden_file.completion["tokens"]))
    status, body, frames, abort = answer(server, golden, completion)
    problems = []
    if status != golden.status:
        problems.append(f"status: reference {golden.status}, mockoss {status}")
    if golden.frames is not None:
        if frames != golden.frames:
            want, got = golden.frames, frames or []
            first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
            problems.append(f"frames differ from frame {first} ({len(want)} vs {len(got)} frames):\n"
                            f"reference: {want[first] if first < len(want) else '<end>'}\n"
                            f"mockoss:   {got[first] if first < len(got) else '<end>'}")
    elif frames is not None or dumps(body) != dumps(golden.body):
        problems.append(f"body:\nreference: {dumps(golden.body)[:1500]}\nmockoss:   {dumps(body)[:1500] if frames is None else frames[:3]}")
    dropped = "connection dropped" in (golden.note or "")
    if bool(abort) != dropped:
        problems.append(f"reference: {golden.note or 'stream ended'}; mockoss: {abort or 'stream ended'}")
    return "\n".join(problems) or None


def _known(case: str, exchange: str) -> list[tuple[str, str]]:
    return [key for key in KNOWN if fnmatch.fnmatchcase(case, key[0]) and fnmatch.fnmatchcase(exchange, key[1])]


PARAMS = [pytest.param(d, i, id=f"{d.name}/{g.case}") for d in _directories() for i, g in enumerate(_goldens(d))]


def test_there_are_goldens() -> None:
    assert _directories(), "no tests/golden/gptoss-reference-*/ directory: run tools/goldens/gptoss_reference.py"


@pytest.mark.parametrize(("directory", "index"), PARAMS)
def test_profile_matches_the_reference_server(directory: Path, index: int, record_property: Callable[[str, object], None]) -> None:
    golden_file = _goldens(directory)[index]
    failing, identical, known = [], 0, 0
    for golden in golden_file.exchanges:
        problem = _difference(golden_file, golden)
        if problem is None:
            identical += 1
        elif _known(golden_file.case, golden.id):
            known += 1
        else:
            failing.append(f"--- {golden.id}\n{problem}")
    record_property("golden", {"directory": directory.name, "identical": identical, "known": known, "different": len(failing)})
    assert not failing, f"{len(failing)}/{len(golden_file.exchanges)} exchanges differ from the reference server:\n" + "\n\n".join(failing[:3])


def test_every_known_difference_still_differs() -> None:
    used = {key for d in _directories() for g in _goldens(d) for e in g.exchanges
            if _known(g.case, e.id) and _difference(g, e) is not None for key in _known(g.case, e.id)}
    assert not set(KNOWN) - used, f"KNOWN lists differences that no longer occur: {sorted(set(KNOWN) - used)}"


@pytest.mark.parametrize("directory", _directories(), ids=lambda d: d.name)
def test_goldens_cover_every_case_as_the_generator_asks_it(directory: Path) -> None:
    """A new or edited scenario, fault kind or request body makes this fail until the goldens are
    regenerated with tools/goldens/gptoss_reference.py."""
    problems = stale(_goldens(directory), _generator().reference_exchanges)
    assert not problems, f"{directory.name} is stale; regenerate it with tools/goldens/gptoss_reference.py:\n" + "\n".join(problems)


def test_the_harmony_library_switch_is_what_makes_the_oss_harmony_goldens_match() -> None:
    """The server run with oss-harmony instead of openai-harmony 0.0.8 answers some exchanges
    differently (headers with two ``<|channel|>`` tokens); only ``harmony_library=oss-harmony``
    reproduces them, so the switch is checked against the real server on both values."""
    directory = ROOT / "gptoss-reference-0.0.9+oss-harmony"
    differing = 0
    for golden_file in _goldens(directory):
        switches = dict(golden_file.header["profile"]["switches"])
        assert switches.pop("harmony_library") == "oss-harmony"
        default = GoldenFile({**golden_file.header, "profile": {"name": "gptoss-reference", "switches": switches}},
                             golden_file.case, golden_file.completion, golden_file.exchanges)
        differing += sum(_difference(default, e) is not None and not _known(golden_file.case, e.id) for e in golden_file.exchanges)
    assert differing > 0, "openai-harmony 0.0.8 (the default) reproduces every oss-harmony golden: the switch is not exercised"
