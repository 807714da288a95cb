"""Load scenario files and compile them into ready-to-serve :class:`Scenario` objects.

Completions are rendered and tokenized once, at load time, and reused by every request; only
completions holding templates are rendered per request (:mod:`mockoss.scenario.render`). Rule
``match`` blocks compile to :class:`~mockoss.scenario.matching.Matcher` objects (regexes
compiled here, once).
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mockoss.scenario.cache import failed_scenarios, loaded_scenarios, scenario_cost
from mockoss.scenario.compile_rules import compile_rule
from mockoss.scenario.compiled import Rule, Scenario, ScenarioError, Step
from mockoss.scenario.locate import validation_errors
from mockoss.scenario.schema import (
    FORMAT_VERSION,
    ScenarioFile,
)
from mockoss.scenario.surrogates import may_hold_surrogates, refuse_surrogates
from mockoss.scenario.yamlsafe import YamlLimitError, check_expansion, construct, parse

__all__ = [
    "MAX_SCENARIO_BYTES",
    "Rule",
    "Scenario",
    "ScenarioError",
    "Step",
    "builtin_dir",
    "builtin_names",
    "changed_on_disk",
    "load_named",
    "load_scenario",
    "scenario_from_bytes",
    "scenario_from_data",
    "scenario_source",
    "switch_problem",
]

#: Largest scenario file read (bytes); larger files are refused before they are read.
MAX_SCENARIO_BYTES = 64 * 1024 * 1024


def scenario_from_data(
    data: Any, *, name: str, origin: str = "<inline>", root: yaml.Node | None = None, default_version: bool = False
) -> Scenario:
    """Validate already-parsed scenario data (a dict) and compile it.

    ``default_version=True`` (inline scenarios written in tests) lets ``version`` be omitted.

    Raises:
        ScenarioError: the data does not follow the format; one line per problem.
    """
    if default_version and isinstance(data, Mapping) and "version" not in data:
        data = {"version": FORMAT_VERSION, **data}
    if root is None:  # given inline (a file's text was checked by _compile)
        refuse_surrogates(data, origin, None)
    try:
        spec = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        from mockoss.scenario.field_hints import with_field_hints  # error paths only

        raise ScenarioError("\n".join(with_field_hints(validation_errors(origin, root, exc, data), ScenarioFile))) from None
    errors: list[str] = []
    if spec.rules is None:
        rules = [compile_rule(spec, 0, None, None, spec.steps or [], ["steps"], origin, root, name, errors)]
    else:
        rules = [
            compile_rule(spec, i, r, r.match, r.steps, ["rules", i, "steps"], origin, root, name, errors)
            for i, r in enumerate(spec.rules)
        ]
    if errors:
        raise ScenarioError("\n".join(errors))
    if spec.switches:  # most scenarios have none: the profiles are not imported (issue 9, start-up)
        from mockoss.scenario.switch_check import check_switches

        check_switches(origin, root, spec.switches)
    return Scenario(
        name=name,
        description=spec.description,
        steps=tuple(step for rule in rules for step in rule.steps),
        when_exhausted=spec.when_exhausted,
        exhausted_error=spec.exhausted_error,
        switches=dict(spec.switches),
        origin=origin,
        rules=tuple(rules),
        seed=spec.seed,
        source=(spec.source,) if isinstance(spec.source, str) else tuple(spec.source or ()),
    )


@functools.cache
def builtin_dir() -> importlib.resources.abc.Traversable:
    """The shipped scenarios' directory, found once per process (``importlib.resources.files``
    costs ~15 us, and the pytest fixture loads a scenario by name for every test)."""
    return importlib.resources.files("mockoss.scenarios")


def builtin_names() -> list[str]:
    """Names of the scenarios that ship with mockoss, sorted."""
    return sorted(p.name.removesuffix(".yaml") for p in builtin_dir().iterdir() if p.name.endswith(".yaml"))


def _reject_duplicate_keys(origin: str, node: yaml.Node) -> None:
    """YAML lets a later key silently replace an earlier one; a scenario file must not."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                line = key.start_mark.line + 1
                if key.value in seen:
                    raise ScenarioError(f"{origin}:{line}: duplicate key {key.value!r} (first at line {seen[key.value]})")
                seen[key.value] = line
            _reject_duplicate_keys(origin, value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _reject_duplicate_keys(origin, item)


def switch_problem(scenario: Scenario, profile: str, switches: Mapping[str, Any]) -> str | None:
    """:func:`mockoss.scenario.switch_check.switch_problem` (imported when a scenario with
    ``switches:`` is selected, not with the loader)."""
    from mockoss.scenario.switch_check import switch_problem as problem

    return problem(scenario, profile, switches)


def _no_such_file(candidate: Path) -> str:
    """The error for a scenario path that names no file, saying where it looked (breaker finding
    7, eleventh session: ``my.yaml: no such scenario file`` did not). A relative path is read from
    the working directory, wherever it is given (``--scenario``, ``validate``, ``MockServer``, the
    pytest fixture and its marker), so one string names one file everywhere; unlike a cassette,
    which the fixture names after its test, a scenario file is not looked for next to the test
    (a second place would let a file there shadow the one the path names): the message shows
    the way to name that one."""
    if candidate.is_dir():  # show/explain/serve --scenario DIR said "no such scenario file" (breaker 16, item 12)
        return (
            f"{candidate}: a directory, not a scenario file: name a .yaml file in it "
            f"(mockoss validate {candidate} checks every one; serve --scenario-dir {candidate} serves them by name)"
        )
    if candidate.is_absolute():
        return f"{candidate}: no such scenario file"
    try:
        cwd = Path.cwd()
    except OSError:  # the working directory was deleted
        return f"{candidate}: no such scenario file (a relative path, read from the working directory, which is gone)"
    return (
        f"{candidate}: no such scenario file: looked for {cwd / candidate} (a relative path is read from the "
        f"working directory, {cwd}; for a file next to a test, give Path(__file__).parent / {candidate.name!r})"
    )


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario from a YAML file path, or by the name of a shipped scenario.

    Raises:
        ScenarioError: no such file or shipped name (the message lists the shipped names), YAML
            syntax errors (with line and column), or schema errors (file, line and field).
    """
    raw, origin, name = scenario_source(path_or_name)
    return scenario_from_bytes(raw, name=name, origin=origin)


def scenario_source(path_or_name: str | Path) -> tuple[bytes, str, str]:
    """The bytes :func:`load_scenario` compiles for ``path_or_name``, with the origin its errors
    name and the scenario's name: ``(raw, origin, name)``. A path (``.yaml``/``.yml``, or an
    existing file) is read; anything else is a shipped scenario's name.

    Raises:
        ScenarioError: an empty name; a name the file system cannot take (too long: it gave a bare
            ``OSError`` before, t18 breaker finding 8); no such file or shipped scenario; a file
            above :data:`MAX_SCENARIO_BYTES`.
    """
    text = str(path_or_name)
    if isinstance(path_or_name, str) and not text.strip():  # Path("") is ".", and said "a directory"
        raise ScenarioError(
            f"{text!r}: an empty scenario name: give a shipped scenario's name (`mockoss scenarios` lists them) "
            "or a .yaml file's path"
        )
    candidate = Path(path_or_name)
    try:
        if candidate.suffix in (".yaml", ".yml") or candidate.exists():
            if not candidate.is_file():
                raise ScenarioError(_no_such_file(candidate))
            size = candidate.stat().st_size
            if size > MAX_SCENARIO_BYTES:
                raise ScenarioError(
                    f"{candidate}: {size:,} bytes, above the {MAX_SCENARIO_BYTES:,}-byte limit for a scenario file"
                )
            return candidate.read_bytes(), str(candidate), candidate.stem
        resource = builtin_dir() / f"{path_or_name}.yaml"
        found = resource.is_file()
    except OSError as exc:  # ENAMETOOLONG (a NUL byte: pathlib answers "no such file", so the name is looked up)
        shown = text if len(text) <= 80 else f"{text[:60]}...({len(text):,} characters)"
        raise ScenarioError(
            f"{shown!r}: not a scenario file or shipped scenario name ({exc.strerror or exc}): give a shipped "
            "scenario's name (`mockoss scenarios` lists them) or a .yaml file's path"
        ) from None
    if not found:
        from mockoss.suggest import did_you_mean

        raise ScenarioError(
            f"unknown scenario {text!r}: not a file, and not a shipped scenario; "
            + did_you_mean(text, builtin_names(), "`mockoss scenarios`")
        )
    return resource.read_bytes(), f"mockoss:scenarios/{path_or_name}.yaml", text


def scenario_from_bytes(raw: bytes, *, name: str, origin: str) -> Scenario:
    """Parse and compile a scenario file's bytes (YAML, or JSON, which YAML reads), kept by
    content in :mod:`mockoss.scenario.cache`: the same ``origin``, ``name`` and bytes again cost
    a lookup and give the same :class:`Scenario` object (``POST /mockoss/scenario`` uploads by
    many sessions of the same scenario share one). Errors name ``origin``, the line and the field.

    Raises:
        ScenarioError: not UTF-8, invalid YAML, or the format's problems.
    """
    key = (origin, name, raw)
    if (cached := loaded_scenarios.get(key)) is not None:  # unchanged since it was last loaded
        return cached
    if (failure := failed_scenarios.get(key)) is not None:  # the same bytes failed: the same error
        raise ScenarioError(failure)
    try:
        scenario = _compile(raw, origin, name)
    except ScenarioError as exc:
        # Kept by content, as the compiled ones are: a request naming a broken file of a
        # --scenario-dir got it parsed again every time (a reviewer's 20,000-step file: 4.5-9.4 s
        # of event loop per request, issue 9); now the second request costs the file's read.
        failed_scenarios.put(key, str(exc), len(raw) + len(str(exc)))
        raise
    return loaded_scenarios.put(key, scenario, scenario_cost(scenario, raw))


def _compile(raw: bytes, origin: str, name: str) -> Scenario:
    """Parse and compile a scenario file's bytes (:func:`load_scenario`'s work on a cache miss)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScenarioError(
            f"{origin}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save the file as UTF-8"
        ) from None

    def build(loader: Any, node: yaml.Node | None) -> tuple[yaml.Node | None, Any]:
        if node is None:
            return None, None
        check_expansion(node)  # before anything walks the tree
        _reject_duplicate_keys(origin, node)
        return node, construct(loader, node)

    try:
        root, data = parse(text, build)  # libyaml's parser when PyYAML has it: the same nodes, data and errors
    except YamlLimitError as exc:
        where = f"{origin}:{exc.line}" if exc.line else origin
        raise ScenarioError(f"{where}: {exc.field}: {exc}" if exc.field else f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{origin}:{mark.line + 1}:{mark.column + 1}" if mark else origin
        raise ScenarioError(f"{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{origin}:1: (top level): a scenario file is a mapping with 'version' and 'steps' or 'rules'")
    try:
        if may_hold_surrogates(text):  # a \u escape: maybe a lone surrogate (mockoss.scenario.surrogates)
            refuse_surrogates(data, origin, root)
        return scenario_from_data(data, name=name, origin=origin, root=root)
    finally:
        # On the error path too: a file with a mistake in its last rule freed its whole tree at
        # once with the exception, holding every other client ~200 ms (a reviewer, 15th session).
        data = None
        _drop_gradually(root)


def _drop_gradually(root: yaml.Node | None) -> None:
    """Free a composed YAML tree a node at a time, so that the interpreter may hand the GIL to
    another thread between any two (the tree of a 548 KB file of 5,001 rules, ~85,000 nodes, freed
    in one go at the end of :func:`_compile` held it ~40-60 ms: every other client waited while a
    ``--scenario-dir`` file compiled on a worker thread; the fifteenth session's breaker, F4). The
    compiled scenario keeps no node (lines are read into its texts while compiling)."""
    pending = [] if root is None else [root]
    while pending:
        node = pending.pop()
        if isinstance(node.value, list):
            children, node.value = node.value, []  # an alias's node, met again, is empty by then
            while children:
                child = children.pop()
                if type(child) is tuple:  # a mapping's (key, value)
                    pending.extend(child)
                else:
                    pending.append(child)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, with any ``OSError`` from probing it (a name over the file system's
    255-byte limit: ``ENAMETOOLONG``, which ``Path.is_file`` lets through) read as "no such file",
    so a client's odd scenario name gets the unknown-name 400, never a 500 quoting the server's
    install path (breaker D14)."""
    try:
        return path.is_file()
    except OSError:
        return False


#: The ``--scenario-dir`` files :func:`load_named` has read, by path (the scenario's ``origin``):
#: what ``os.stat`` said just before the read, and the scenario read. :func:`changed_on_disk`
#: compares the file against it (breaker finding 5c, eleventh session: an edited or deleted file
#: kept being served for the server's life). One entry per file path ever named: bounded by the
#: operator's directories.
_DIR_FILES: dict[str, tuple[tuple[int, int, int], Scenario]] = {}


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """``(mtime_ns, size, inode)`` of ``path`` (through a link), ``None`` if it cannot be read."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def changed_on_disk(scenario: Scenario) -> bool:
    """Whether ``scenario`` was read from a ``--scenario-dir`` file by :func:`load_named` and that
    file has since been edited, replaced or deleted (one ``os.stat``, ~2 us; a scenario that did
    not come from a scenario directory costs a dict lookup and is never "changed"). The server
    asks before each use of such a scenario and loads the file again when it changed."""
    entry = _DIR_FILES.get(scenario.origin)
    if entry is None:
        return False
    stamp, loaded = entry
    return loaded is not scenario or _stamp(Path(scenario.origin)) != stamp


def _load_dir_file(path: Path, max_bytes: int | None = None) -> Scenario:
    """Load a ``--scenario-dir`` file and remember its stamp for :func:`changed_on_disk` (taken
    before the read: a write during the read shows as a change at the next use). A file over
    ``max_bytes`` (``--max-scenario-bytes``) is refused unread, as an upload that size is."""
    stamp = _stamp(path)
    if max_bytes is not None and stamp is not None and stamp[1] > max_bytes:
        raise ScenarioError(
            f"{path}: {stamp[1]:,} bytes, above the {max_bytes:,}-byte limit for a scenario a request names "
            "(--max-scenario-bytes, ControlOptions(max_scenario_bytes=...), which caps uploads too)"
        )
    scenario = load_scenario(path)
    if stamp is not None:
        _DIR_FILES[str(path)] = (stamp, scenario)
    return scenario


def load_named(name: str, scenario_dirs: Sequence[str | Path] = (), *, max_bytes: int | None = None) -> Scenario:
    """Load the scenario a request names (``X-Mockoss-Scenario``): ``NAME.yaml`` or ``NAME.yml``
    in one of ``scenario_dirs`` (searched in order), else a shipped scenario, and nothing else.

    The operator's directory comes first: a file there named like a shipped scenario answers for
    that name (breaker finding 5a, eleventh session: it was silently ignored for the shipped one).
    A file there may be a symbolic link (Bazel runfiles, nix): the operator put it in the
    directory, so it is served wherever it points (finding 5b: it was refused as "not in the
    scenario directories"). What a client can name still cannot leave the directory: a name with
    a path separator, a leading dot (``..``), a NUL or a ``.yaml`` suffix is refused, and the
    joined path must sit directly in the directory (a drive-qualified name on Windows does not),
    so a client cannot make the server read (and quote in an error) ``.env``, a log or any other
    file of its working directory (issue 9, item 4). ``max_bytes``: the largest directory file
    read (a served mockoss passes ``--max-scenario-bytes``; ``None``: :data:`MAX_SCENARIO_BYTES`).

    Raises:
        ScenarioError: not a valid name, not found (the message lists the shipped names and the
            directories searched), a directory file over ``max_bytes`` (its path, size and the
            limit), or the file's own problems (file, line and field).
    """
    if not name or "/" in name or "\\" in name or name.startswith(".") or name.endswith((".yaml", ".yml")) or "\0" in name:
        raise ScenarioError(
            f"X-Mockoss-Scenario takes a scenario name (a shipped one, one registered with the server, or a "
            f"file NAME.yaml in a --scenario-dir), not a file path: {name!r}"
        )
    for directory in scenario_dirs:
        base = Path(directory).resolve()
        for suffix in (".yaml", ".yml"):
            candidate = base / f"{name}{suffix}"
            if candidate.parent == base and _is_file(candidate):
                return _load_dir_file(candidate, max_bytes)
    if _is_file(builtin_dir() / f"{name}.yaml"):
        return load_scenario(name)
    searched = ", ".join(str(d) for d in scenario_dirs) if scenario_dirs else "none given (--scenario-dir)"
    from mockoss.suggest import did_you_mean

    raise ScenarioError(
        f"unknown scenario {name!r}: not registered with the server, not in the scenario directories ({searched}), "
        "and not a shipped scenario; " + did_you_mean(name, builtin_names(), "`mockoss scenarios`")
    )
