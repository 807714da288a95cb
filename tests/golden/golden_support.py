"""Run golden exchanges through mockoss's emulated profile and compare them (issue 8).

Used by ``test_vllm_goldens.py`` and the summary hook in ``conftest.py``. Each golden exchange
is answered in process by a :class:`~mockoss.server.core.MockServer` whose only answer is the
golden's completion (the token ids real vLLM emitted, passed as the answering step), then
normalised with :mod:`mockoss.golden.normalise` exactly as the generator normalised vLLM's
answer, and compared as compact JSON (bodies) or frame by frame (streams).

Which profile stands for a golden directory: the header's ``profile`` entry (``{"name": …,
"switches": {…}}`` or a name), else :data:`RELEASE_PROFILES` by version, else the profile
``vllm@<version>`` when the release timeline knows that version, else ``vllm`` (the newest); the
header's ``server_flags`` add the switches that emulate them (:data:`FLAG_SWITCHES`).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from mockoss.golden.normalise import dumps, normalise_body, normalise_frames
from mockoss.golden.store import GoldenExchange, GoldenFile, golden_dirs, read_golden_dir
from mockoss.harmony import Completion
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.releases import ReleaseWarning
from mockoss.scenario.loader import Step
from mockoss.server.core import MockServer

ROOT = Path(__file__).resolve().parent
KNOWN_FILE = ROOT / "known_differences.yaml"

#: Version → (profile name, switches) where neither the header nor ``vllm@<version>`` says it.
RELEASE_PROFILES: Mapping[str, tuple[str, Mapping[str, Any]]] = {}
#: vLLM server flags (the header's ``server_flags``) that change answers → the ``vllm`` switch
#: that emulates them and how to read the value. ``--max-model-len`` caps Responses'
#: ``max_output_tokens`` (vllm/entrypoints/openai/responses/serving.py, ``get_max_tokens``).
FLAG_SWITCHES: Mapping[str, tuple[str, Any]] = {"--max-model-len": ("max_model_len", int)}

IDENTICAL, KNOWN, DIFFERENT = "identical", "known", "different"


@dataclass(frozen=True, slots=True)
class KnownDifference:
    """One entry of ``known_differences.yaml``: which exchanges, why, and the switch that gives the other behaviour."""

    golden: str
    case: str
    exchange: str
    reason: str
    switch: str | None
    #: JSON paths (``choices[].weight_versions``; ``[]`` = every list element) removed from both
    #: answers before comparing again; empty: the whole exchange differs for ``reason``.
    ignore: tuple[str, ...] = ()
    #: A glob the golden exchange's ``note`` must match (e.g. ``engine artefact*``), else ``None``.
    note: str | None = None

    def matches(self, golden: str, case: str, exchange: str, note: str | None = None) -> bool:
        return (
            fnmatch.fnmatchcase(golden, self.golden)
            and fnmatch.fnmatchcase(case, self.case)
            and fnmatch.fnmatchcase(exchange, self.exchange)
            and (self.note is None or fnmatch.fnmatchcase(note or "", self.note))
        )

    @property
    def label(self) -> str:
        label = f"{self.golden}/{self.case}/{self.exchange}"
        if self.note is not None:
            label += f" note {self.note!r}"
        return label + (f" ignore {', '.join(self.ignore)}" if self.ignore else "")


@cache
def known_differences() -> tuple[KnownDifference, ...]:
    """The entries of ``known_differences.yaml``.

    Raises:
        ValueError: an entry lacks ``case``, ``exchange`` or a non-empty ``reason``, lacks the
            ``switch`` key, or has an unknown key (the entry's index is named).
    """
    data = yaml.safe_load(KNOWN_FILE.read_text(encoding="utf-8")) if KNOWN_FILE.exists() else None
    entries = (data or {}).get("differences") or []
    out = []
    for index, entry in enumerate(entries):
        where = f"{KNOWN_FILE.name}: differences[{index}]"
        unknown = set(entry) - {"golden", "case", "exchange", "reason", "switch", "ignore", "note"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        if not str(entry.get("reason") or "").strip():
            raise ValueError(f"{where}: 'reason' is required")
        if "switch" not in entry:
            raise ValueError(f"{where}: 'switch' is required (the switch that reproduces the other behaviour, or null)")
        for key in ("case", "exchange"):
            if not isinstance(entry.get(key), str):
                raise ValueError(f"{where}: {key!r} is required (a glob)")  # noqa: TRY004  # the documented error
        ignore = entry.get("ignore") or []
        if not isinstance(ignore, list) or not all(isinstance(p, str) and p for p in ignore):
            raise ValueError(f"{where}: 'ignore' is a list of JSON paths such as choices[].weight_versions")
        note = entry.get("note")
        if note is not None and not isinstance(note, str):
            raise ValueError(f"{where}: 'note' is a glob over the golden exchange's note")
        out.append(KnownDifference(entry.get("golden", "*"), entry["case"], entry["exchange"],
                                   " ".join(str(entry["reason"]).split()), entry["switch"], tuple(ignore), note))
    return tuple(out)


def known_for(golden: str, case: str, exchange: str, note: str | None = None) -> list[KnownDifference]:
    """Every entry of ``known_differences.yaml`` that names this exchange (and its golden note)."""
    return [k for k in known_differences() if k.matches(golden, case, exchange, note)]


def _parts(path: str) -> list[str]:
    return [part for part in path.replace("[]", ".[]").split(".") if part]


def _drop(value: Any, parts: list[str]) -> Any:
    """``value`` without what ``parts`` names (a copy where something changes)."""
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if head == "[]":
        return [_drop(item, rest) for item in value] if isinstance(value, list) else value
    if not isinstance(value, dict) or head not in value:
        return value
    if not rest:
        return {k: v for k, v in value.items() if k != head}
    return {k: (_drop(v, rest) if k == head else v) for k, v in value.items()}


def mask_json(value: Any, paths: tuple[str, ...]) -> Any:
    """``value`` with every JSON path of ``paths`` removed."""
    for path in paths:
        value = _drop(value, _parts(path))
    return value


def mask_frame(frame: str, paths: tuple[str, ...]) -> str:
    """An SSE frame with ``paths`` removed from its ``data:`` JSON."""
    lines = []
    for line in frame.split("\n"):
        if line.startswith("data: "):
            try:
                line = "data: " + dumps(mask_json(json.loads(line[6:]), paths))
            except ValueError:
                pass
        lines.append(line)
    return "\n".join(lines)


@cache
def golden_directories() -> tuple[Path, ...]:
    return tuple(golden_dirs(ROOT, "vllm"))


@cache
def goldens(directory: Path) -> tuple[GoldenFile, ...]:
    return tuple(read_golden_dir(directory))


def stale(recorded: Sequence[GoldenFile], asked: Callable[[Any], Sequence[Any]]) -> list[str]:
    """Why ``recorded`` no longer covers every case of :func:`mockoss.golden.cases.all_cases` as the
    generator asks it (``asked(case)``: its exchanges, each with ``id`` and ``request``): a case
    with no golden, whose tokens or exchanges changed, or a golden of a case that is gone. Empty
    when current; a goldens test asserts it empty, naming its generator."""
    from mockoss.golden.cases import all_cases

    by_case = {golden.case: golden for golden in recorded}
    problems = []
    for case in all_cases():
        golden = by_case.pop(case.id, None)
        if golden is None:
            problems.append(f"{case.id}: no golden")
        elif golden.completion.get("tokens") != list(case.completion.tokens):
            problems.append(f"{case.id}: the completion changed")
        elif [(e.id, e.request) for e in golden.exchanges] != [(e.id, e.request) for e in asked(case)]:
            problems.append(f"{case.id}: the exchanges or request bodies changed")
    problems.extend(f"{name}: no such case any more" for name in by_case)
    return problems


def flag_switches(flags: Any) -> dict[str, Any]:
    """The switches that emulate the server flags a golden was recorded with (:data:`FLAG_SWITCHES`)."""
    out: dict[str, Any] = {}
    items = list(flags or ())
    for index, flag in enumerate(items[:-1]):
        if flag in FLAG_SWITCHES:
            name, read = FLAG_SWITCHES[flag]
            out[name] = read(items[index + 1])
    return out


def profile_for(header: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The mockoss profile name and switches that stand for the release (and server flags) a golden header names."""
    flags = flag_switches(header.get("server_flags"))
    spec = header.get("profile")
    if isinstance(spec, str):
        return spec, flags
    if isinstance(spec, Mapping):
        return str(spec["name"]), {**flags, **dict(spec.get("switches") or {})}
    version = str(header["version"])
    if version in RELEASE_PROFILES:
        name, switches = RELEASE_PROFILES[version]
        return name, {**flags, **dict(switches)}
    try:
        get_profile(f"vllm@{version}")
    except (ProfileError, ValueError, KeyError, ReleaseWarning):  # ReleaseWarning: newer than mockoss knows
        return "vllm", flags
    return f"vllm@{version}", flags


@cache
def server_for(name: str, switches_json: str) -> MockServer:
    return MockServer(profile=name, switches=json.loads(switches_json), request_log_limit=1)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one golden exchange compared: :data:`IDENTICAL`, :data:`KNOWN` or :data:`DIFFERENT`."""

    exchange: str
    result: str
    diff: str = ""
    known: tuple[KnownDifference, ...] = ()


def answer(server: MockServer, golden: GoldenExchange, completion: Completion) -> tuple[int, Any, list[str] | None, str | None]:
    """mockoss's (status, normalised body, normalised frames, abort) for one golden exchange."""
    endpoint = "chat" if golden.endpoint.endswith("/chat/completions") else "responses"
    raw = json.dumps(golden.request).encode()
    reply, _ = server.respond(endpoint, raw, {}, step=Step(index=0, completion=completion, error=None))
    if reply.streamed:
        return reply.status, None, normalise_frames(list(reply.frames)), reply.abort
    return reply.status, normalise_body(reply.body), None, reply.abort


def _window(line: str, at: int, width: int) -> str:
    """``line`` cut to ``width`` characters around position ``at`` (its sign column kept)."""
    if len(line) <= width:
        return line
    start = max(1, min(at - width // 3, len(line) - width))
    return line[0] + ("…" if start > 1 else "") + line[start : start + width] + ("…" if start + width < len(line) else "")


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _lines_diff(want: list[str], got: list[str], limit: int = 24, width: int = 300) -> str:
    """A unified diff of two line lists; a long changed line is shown around its first difference."""
    lines = list(difflib.unified_diff(want, got, "vllm (golden)", "mockoss", n=1, lineterm=""))
    out = []
    index = 0
    while index < len(lines):
        start = index
        while index < len(lines) and lines[index].startswith("-") and not lines[index].startswith("---"):
            index += 1
        removed = lines[start:index]
        added_start = index
        while index < len(lines) and lines[index].startswith("+") and not lines[index].startswith("+++"):
            index += 1
        added = lines[added_start:index]
        if removed and len(removed) == len(added):
            for old, new in zip(removed, added):
                at = _first_difference(old[1:], new[1:]) + 1
                out.extend((_window(old, at, width), _window(new, at, width)))
        else:
            out.extend(_window(line, 0, width) for line in removed + added)
        if index == start:
            out.append(_window(lines[index], 0, width))
            index += 1
    if len(out) > limit:
        out = out[:limit] + [f"… {len(out) - limit} more diff lines"]
    return "\n".join(out)


def _problems(
    golden: GoldenExchange, status: int, body: Any, frames: list[str] | None, abort: str | None,
    ignore: tuple[str, ...] = (),
) -> list[str]:
    """What differs between the golden and mockoss's answer, ``ignore``'s paths removed from both."""
    want_body, want_frames = golden.body, golden.frames
    if ignore:
        body, want_body = mask_json(body, ignore), mask_json(want_body, ignore)
        frames = None if frames is None else [mask_frame(f, ignore) for f in frames]
        want_frames = None if want_frames is None else [mask_frame(f, ignore) for f in want_frames]
    problems = []
    if status != golden.status:
        problems.append(f"status: vllm {golden.status}, mockoss {status}")
    if want_frames is not None:
        if frames is None:
            problems.append(f"vllm streams {len(want_frames)} frames; mockoss answers a body: {dumps(body)[:300]}")
        elif frames != want_frames:
            problems.append(_lines_diff(want_frames, frames))
    elif frames is not None:
        problems.append(f"vllm answers a body, mockoss streams {len(frames)} frames; vllm body: {dumps(want_body)[:300]}")
    elif dumps(body) != dumps(want_body):
        want = json.dumps(want_body, indent=1, ensure_ascii=False).splitlines()
        got = json.dumps(body, indent=1, ensure_ascii=False).splitlines()
        problems.append(_lines_diff(want, got))
    dropped = "connection dropped" in (golden.note or "").lower()
    if abort and not dropped:
        problems.append(f"mockoss drops the connection ({abort}); vllm ends the stream")
    elif dropped and not abort:
        problems.append(f"vllm: {golden.note}; mockoss ends the stream")
    return problems


def compare(directory: str, golden_file: GoldenFile, golden: GoldenExchange) -> Outcome:
    """Compare one golden exchange with mockoss's answer; a difference carries a compact diff.

    A difference is :data:`KNOWN` when ``known_differences.yaml`` names the exchange with an entry
    without ``ignore``, or when removing the ``ignore`` paths of every entry naming it leaves
    nothing different; otherwise it is :data:`DIFFERENT`, and the diff shown is what remains.
    """
    name, switches = profile_for(golden_file.header)
    server = server_for(name, json.dumps(switches, sort_keys=True))
    tokens = tuple(golden_file.completion["tokens"])
    completion = Completion(text=golden_file.completion["text"], tokens=tokens)
    status, body, frames, abort = answer(server, golden, completion)
    problems = _problems(golden, status, body, frames, abort)
    if not problems:
        return Outcome(golden.id, IDENTICAL)
    entries = known_for(directory, golden_file.case, golden.id, golden.note)
    whole = [k for k in entries if not k.ignore]
    if whole:
        return Outcome(golden.id, KNOWN, "\n".join(problems), tuple(whole))
    masked = [k for k in entries if k.ignore]
    if masked:
        ignore = tuple(path for k in masked for path in k.ignore)
        remaining = _problems(golden, status, body, frames, abort, ignore)
        if not remaining:
            return Outcome(golden.id, KNOWN, "\n".join(problems), tuple(masked))
        problems = [f"(after removing the known differences {', '.join(ignore)})", *remaining]
    return Outcome(golden.id, DIFFERENT, "\n".join(problems))


@cache
def compare_file(directory: Path, index: int) -> tuple[Outcome, ...]:
    """Every exchange of the ``index``-th golden file of ``directory``, compared (cached per process)."""
    golden_file = goldens(directory)[index]
    return tuple(compare(directory.name, golden_file, golden) for golden in golden_file.exchanges)


def read_replies(path: Path) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """A recorded-replies file (gzip'd JSON lines, ``tools/*_diff.py --record``): its header line
    and its records."""
    import gzip

    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    return json.loads(lines[0]), tuple(json.loads(line) for line in lines[1:])


def scenario_step(case: str) -> Step:
    """The built-in scenario step a recorded case names (``"clean-answer#0"``)."""
    from mockoss.scenario.loader import load_named

    name, index = case.rsplit("#", 1)
    return load_named(name).steps[int(index)]
