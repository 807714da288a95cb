"""Scenario YAML composed by libyaml (``yaml.CSafeLoader``) gives what PyYAML's pure-Python
``yaml.SafeLoader`` gives: the same nodes (tag, value, ``start_mark.line`` of every node), the same
constructed data, the same errors and their text (:func:`mockoss.scenario.yamlsafe.parse`).

Each case runs twice, once with libyaml (when PyYAML has it) and once with ``_C_LOADER`` set to
``None`` (the pure-Python loader every scenario went through before session 16), and the two
outcomes must be equal. The divergences found between the parsers (libyaml 0.2.5 vs PyYAML
6.0.x) are pinned below: each fails if ``parse`` takes libyaml's word for it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockoss.scenario import yamlsafe
from mockoss.scenario.cache import clear_scenario_cache
from mockoss.scenario.compiled import ScenarioError
from mockoss.scenario.loader import scenario_from_bytes
from mockoss.upstream.record_yaml import dump, exact

ROOT = Path(__file__).resolve().parents[2]
HAVE_C = yamlsafe._C_LOADER is not None


def _tree(node: yaml.Node | None) -> Any:
    """A node as plain data: tag, value and line of every node (aliases written out)."""
    if node is None:
        return None
    if isinstance(node, yaml.ScalarNode):
        return (node.tag, node.value, node.start_mark.line)
    if isinstance(node, yaml.SequenceNode):
        return (node.tag, node.start_mark.line, [_tree(item) for item in node.value])
    return (node.tag, node.start_mark.line, [(_tree(k), _tree(v)) for k, v in node.value])


def _outcome(text: str) -> tuple[Any, ...]:
    def build(loader: Any, root: yaml.Node | None) -> Any:
        if root is None:
            return None
        yamlsafe.check_expansion(root)
        return _tree(root), repr(yamlsafe.construct(loader, root))

    try:
        return ("ok", yamlsafe.parse(text, build))
    except (yaml.YAMLError, yamlsafe.YamlLimitError) as exc:
        return ("error", type(exc).__name__, str(exc), getattr(exc, "line", None))


def _both(monkeypatch: pytest.MonkeyPatch, run: Any) -> tuple[Any, Any]:
    """``run()`` with libyaml, then with the pure-Python loader."""
    with_c = run()
    with monkeypatch.context() as patch:
        patch.setattr(yamlsafe, "_C_LOADER", None)
        return with_c, run()


def _file_outcome(raw: bytes) -> str:
    clear_scenario_cache()  # compiled scenarios are kept by content
    try:
        scenario_from_bytes(raw, name="case", origin="case.yaml")
    except ScenarioError as exc:
        return f"error: {exc}"
    return "ok"  # the same data compiles the same


SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))
TEST_YAML = sorted(p for p in (ROOT / "tests").rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))


def test_shipped_scenarios_are_found_and_composed_by_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(SHIPPED) >= 30
    if not HAVE_C:
        pytest.skip("PyYAML without libyaml")
    used: list[int] = []
    real = yamlsafe._C_LOADER

    def spy(text: str) -> Any:
        used.append(1)
        return real(text)

    monkeypatch.setattr(yamlsafe, "_C_LOADER", spy)
    for path in SHIPPED:
        _outcome(path.read_text(encoding="utf-8"))
    assert len(used) == len(SHIPPED)


@pytest.mark.parametrize("path", SHIPPED + TEST_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_files_compose_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8")
    with_c, python = _both(monkeypatch, lambda: _outcome(text))
    assert with_c == python


def test_a_recording_composes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cassette as :func:`mockoss.upstream.record_yaml.dump` writes it: double-quoted payloads,
    a lone surrogate (written by PyYAML's emitter as ``\\uD800``, which libyaml refuses to read:
    the pure-Python loader reads it), tabs and newlines escaped, a flow list of times."""
    steps = [
        exact(
            {
                "note": f"turn {i}: héllo\twörld 😀 \u2028 {'?' * (i % 3)}",
                "completion": {"raw": f"<|start|>assistant<|message|>{i}\n\t{{x}} ? [a?b]<|end|>"},
                "frame_times_ms": [0.5 * i, 1.25],
            }
        )
        for i in range(30)
    ]
    cases = [dump({"version": 1, "steps": steps}), dump({"version": 1, "steps": [exact({"note": "a\ud800b"})]})]
    for text in cases:
        with_c, python = _both(monkeypatch, lambda text=text: _outcome(text))
        assert with_c == python
        assert with_c[0] == "ok"


GENERATED = {
    "anchors": "base: &b {role: assistant, text: hi}\nsteps:\n  - *b\n  - {<<: *b, text: other}\n  - &l [1, 2]\n  - *l\n",
    "multiline": "a: |\n  one\n  two\n\n  three\nb: >-\n  folded\n  text\n\n  para\nc: |+\n  keep\n\nd: plain\n  continued\n",
    "unicode": "é: 'ünïcødé'\nemoji: \"😀 \\u00e9 \\U0001F600\"\ncjk: 中文\nrtl: שלום\nzw: a\u200bb\n",
    "big_ints": "a: 123456789012345678901234567890\nb: 0x_FF\nc: 1_000\nd: 0b1010\ne: 190:20:30\nf: -0o17\ng: .inf\n",
    "too_many_digits": "a: " + "9" * 5000 + "\n",
    "timestamps": "a: 2001-12-14t21:59:43.10-05:00\nb: 2002-12-14\nc: 2001-12-14 21:59:43.10\n",
    "bad_timestamp": "a: 2001-13-14\n",
    "tags_refused": "a: !!binary aGk=\nb: !!set {x}\nc: !custom 1\nd: !!python/tuple [1]\n",
    "tag_verbatim": "a: !<tag:yaml.org,2002:str> 1\nb: !!str 2\nc: !!int '3'\n",
    "billion_laughs": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefg", "bcdefgh")),
    "recursive_alias": "a: &a [*a]\n",
    "unhashable_key": "? [1]\n: 2\n",
    "crlf": "a: 1\r\nb: |\r\n  x\r\n  y\r\n",
    "bom": "\ufeffa: 1\n",
    "empty": "",
    "comment_only": "# nothing\n",
    "null_doc": "~\n",
    "two_docs": "a: 1\n---\nb: 2\n",
    "syntax_error": "steps:\n  - completion: {raw: x\n  - other\n",
    "undefined_alias": "a: *nope\n",
    "duplicate_anchor": "a: &a 1\nb: &a 2\n",
    "control_char": "a: \x01\n",
    # Where libyaml and PyYAML disagree (see yamlsafe.parse): PyYAML's verdict stands.
    "tab_separator": "a:\tb\n",
    "tab_in_plain": "a: b\tc\n",
    "tab_before_comment": "a: b\t# c\n",
    "question_in_flow": "a: [x?y, ?z]\n",
    "question_in_flow_map": "a: {k?: v}\n",
    "block_header_comment": "a: |#\n  x\n",
    "bare_tag_empty": "a: !\nb: 1\n",
    "bare_tag_empty_root": "!\n",
    "no_final_newline": "version: 1\nsteps:",
    "no_final_newline_doc_start": "---",
    "no_final_newline_explicit_key": "steps:\n  ? a",
    "no_final_newline_empty_item": "- a\n-",
    "yaml_1_3": "%YAML 1.3\n---\na: 1\n",
    "unknown_directive": "%FOO bar\n---\na: 1\n",
    "bom_inside": "a: 1\n\ufeffb: 2\n",
    "undefined_escape_surrogate": 'a: "\\ud800"\n',
    "nested_400": "[" * 400 + "]" * 400 + "\n",
    "nested_600": "[" * 600 + "]" * 600 + "\n",
    "nested_block": "".join(" " * i + "- \n" for i in range(120)),
    "nested_alias_depth": "a: &a [[[[[[[[[[x]]]]]]]]]]\n"
    + "".join(f"l{i}: &l{i} [*{'a' if i == 0 else f'l{i - 1}'}]\n" for i in range(60)),
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_inputs_give_the_same_nodes_data_and_errors(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = GENERATED[name]
    with_c, python = _both(monkeypatch, lambda: _outcome(text))
    assert with_c == python
    raw = text.encode("utf-8", "surrogatepass")
    with_c, python = _both(monkeypatch, lambda: _file_outcome(raw))
    assert with_c == python


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_switch_values_parse_the_same(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``X-Mockoss-Switch`` values and ``--switch`` go through :func:`yamlsafe.load_plain`."""
    text = GENERATED[name]

    def run() -> Any:
        try:
            return ("ok", repr(yamlsafe.load_plain(text)))
        except (yaml.YAMLError, yamlsafe.YamlLimitError) as exc:
            return ("error", type(exc).__name__, str(exc))

    with_c, python = _both(monkeypatch, run)
    assert with_c == python


def test_a_syntax_error_reads_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure-Python loader's message, quoted line and all (libyaml's would be "did not find
    expected ',' or '}'" without the line)."""
    raw = b"version: 1\nsteps:\n  - completion: {raw: x\n  - other\n"
    with_c, python = _both(monkeypatch, lambda: _file_outcome(raw))
    assert with_c == python
    assert with_c.startswith("error: case.yaml:5:1: invalid YAML: expected ',' or '}', but got '<stream end>'")
    text = "a: {b: 1\n"
    with_c, python = _both(monkeypatch, lambda: _outcome(text))
    assert with_c == python
    assert "line 2, column 1:\n    \n    ^" in with_c[2]  # PyYAML's snippet under the mark


def test_divergences_libyaml_accepts_are_refused_as_before() -> None:
    """libyaml alone would load these; PyYAML refuses them, and so does the loader still."""
    for name in ("tab_separator", "tab_in_plain", "question_in_flow", "block_header_comment"):
        assert _outcome(GENERATED[name])[0] == "error", name
    assert _outcome(GENERATED["bare_tag_empty"])[1][1] == "{'a': None, 'b': 1}"


ATOMS = (
    [" ", " ", "\n", "\n", ": ", ":", "- ", "-", "?", "? ", "[", "]", "{", "}", ", ", ",", "#", " #"]
    + ["&a ", "*a", "&b ", "*b", "!", "! ", "!!str ", "!!binary ", "!e! ", "!<x> ", "|", ">", "|2", ">-", "|+"]
    + ["'", '"', "a", "b", "1", "x y", "  ", "\\", "\\n", ".", "---", "...", "%", "@", "é", "\r\n", "\t"]
    + ["null", "~", "0x1F", "2001-01-01", "<<: ", "'x'", '"y"', "\u2028", "\x85", "\n  ", "\n- ", "  - "]
)


def test_random_token_soup_composes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 seeded snippets of YAML's indicators (this soup found the tab, ``?``, ``|#``, ``!``
    and end-of-stream divergences; 190,000 more ran clean while writing this)."""
    rnd = random.Random(16)
    texts = [
        "".join(rnd.choice(ATOMS) for _ in range(rnd.randint(1, 14))) + rnd.choice(["\n", "\n", "", "\r\n", " \n"])
        for _ in range(3000)
    ]
    with_c = [_outcome(t) for t in texts]
    with monkeypatch.context() as patch:
        patch.setattr(yamlsafe, "_C_LOADER", None)
        python = [_outcome(t) for t in texts]
    assert [t for t, a, b in zip(texts, with_c, python) if a != b] == []
