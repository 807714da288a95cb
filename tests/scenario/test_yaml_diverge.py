"""The cheap divergence check (:func:`mockoss.scenario.yaml_c_diverge.diverges`: the text read
first, then the collections walked) flags every libyaml tree the node-by-node walk
(:func:`~mockoss.scenario.yaml_c_diverge.tree_diverges`, the check before session 18) flags, so
:func:`mockoss.scenario.yamlsafe.parse` sends the same texts to PyYAML (or more: harmless, the
same result). End to end, tests/scenario/test_yaml_c_parser.py compares libyaml's outcome with
PyYAML's on the same inputs.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from mockoss.scenario import yaml_c_diverge, yamlsafe
from mockoss.scenario.yaml_c_diverge import C_MAX_DEPTH, diverges, tree_diverges

pytestmark = pytest.mark.skipif(yamlsafe._C_LOADER is None, reason="PyYAML without libyaml")


def _root(text: str) -> Any:
    """libyaml's tree of ``text``, or ``None`` where libyaml refuses it (then PyYAML parses it)."""
    loader = yamlsafe._C_LOADER(text)
    try:
        return loader.get_single_node()
    except (yaml.YAMLError, UnicodeError):
        return None
    finally:
        loader.dispose()


def _check(text: str) -> bool | None:
    """``tree_diverges`` of ``text``'s libyaml tree, after asserting ``diverges`` agrees or is
    more careful; ``None``: libyaml refused it."""
    root = _root(text)
    if root is None:
        return None
    walked = tree_diverges(root)
    if walked:
        assert diverges(root, text), text
    return walked


def _nest(levels: int, item: str) -> str:
    return "[" * levels + item + "]" * levels + "\n"


SHAPES = {
    # ? in a flow plain scalar, with no ! or * anywhere (the collections-only walk decides)
    "question_in_flow": ("a: [x?y, z]\n", True),
    "question_in_flow_map": ("a: {k: is it?}\n", True),
    "question_in_nested_flow": ("a:\n  - b: [1, {c: [d, e?]}]\n", True),
    "question_multiline_flow": ('{"a": [1,\n 2],\n "b": x?y\n}\n', True),
    "question_after_bom": ("\ufeffa: [1]\nb: [p?q]\n", True),
    "question_crlf": ("a: [1]\r\nb: [p?q]\r\n", True),
    "question_unicode_breaks": ("é😀: [1]\u2028b: [p?q]\n", True),
    "question_in_implicit_pair": ("a: [k: v?w]\n", True),
    "question_quoted_in_flow": ("a: ['is it?', \"why?\"]\nb: plain? yes\n", False),
    "question_in_block_plain": ("a: is it? yes\nb: [1, 2]\n", False),
    # a bare ! (or an explicit str tag) on an empty value
    "bare_tag_empty": ("a: !\nb: [1]\n", True),
    "bare_tag_in_flow": ("a: [!, 1]\n", True),
    "bare_tag_after_quote_key": ('{"a":!, b: 1}\n', True),
    "str_tag_empty": ("a: !!str\n", True),
    "bang_in_prose": ("a: Hi! [x, y]\nb: 'wow!'\n", False),
    # depth
    "deep_flow": (_nest(C_MAX_DEPTH + 1, "x"), True),
    "deep_flow_just_under": (_nest(C_MAX_DEPTH - 1, "x"), False),
    "deep_block": ("".join(" " * i + "- \n" for i in range(C_MAX_DEPTH + 2)), True),
    "deep_compact_block": ("- " * (C_MAX_DEPTH + 1) + "x\n", True),
    "deep_block_then_flow": (
        "".join(" " * i + "- \n" for i in range(C_MAX_DEPTH - 3)) + " " * 60 + "- [[[[x]]]]\n",
        True,
    ),
    "deep_implicit_pairs": ("a: " + "[k: " * 30 + "x" + "]" * 30 + "\n", True),
    "deep_through_alias": ("d: &d " + _nest(40, "x").strip() + "\ne: " + _nest(15, "*d"), True),
    "shallow_alias": ("a: &a [1, {b: 2}]\nc: [*a, *a]\n", False),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_divergence_is_flagged(name: str) -> None:
    text, walked = SHAPES[name]
    assert _check(text) is walked


def test_typical_scenarios_are_not_walked_node_by_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario without tags or aliases, with flow mappings, questions and exclamations in its
    text, is decided on its collections: no node-by-node walk of the whole tree."""
    rule = (
        "  - match: {{last_user: '^q{i}$'}}\n    steps:\n      - completion:\n          messages:\n"
        "            - {{channel: analysis, content: 'Is it {i}? Need to think!'}}\n"
        "            - channel: final\n              content: It is sunny, is that fine? Great!\n"
    )
    text = "version: 1\nrules:\n" + "".join(rule.format(i=i) for i in range(200))
    root = _root(text)
    walked: list[int] = []
    real = yaml_c_diverge.tree_diverges

    def spy(node: yaml.Node, depth: int = 0) -> bool:
        walked.append(depth)
        return real(node, depth)

    monkeypatch.setattr(yaml_c_diverge, "tree_diverges", spy)
    assert diverges(root, text) is False
    assert walked == [7] * 200  # each flow mapping holding a "?" (quoted: no divergence), 7 levels down


ATOMS = (
    [" ", " ", "\n", "\n", ": ", ":", "- ", "-", "?", "? ", "[", "]", "{", "}", ", ", ",", "#", " #"]
    + ["|", ">", "|2", ">-", "'", '"', "a", "b", "1", "x y", "  ", "\\", ".", "---", "...", "%", "é"]
    + ["\r\n", "\u2028", "\x85", "\n  ", "\n- ", "  - ", "[a?b]", "{k: v}", "[[", "]]", "\ufeff", "<<: "]
)


@pytest.mark.parametrize("seed", [18, 19])
def test_soup_without_tags_or_aliases(seed: int) -> None:
    """Seeded snippets of YAML's indicators without ``!``, ``&`` or ``*`` (those go to the
    node-by-node walk): every tree the walk flags is flagged (100,000 snippets ran clean while
    writing this)."""
    rnd = random.Random(seed)
    flagged = 0
    for _ in range(3000):
        text = "".join(rnd.choice(ATOMS) for _ in range(rnd.randint(1, 16))) + "\n"
        flagged += bool(_check(text))
    assert flagged >= 5  # the soup does reach divergent trees
