"""YAML that cannot explode: alias expansion bounded, only plain JSON-like values.

PyYAML builds an alias as a shared reference, so a 481-byte file of nested aliases (the "billion
laughs" shape: ``a: &a [x, x, …]``, ``b: &b [*a, *a, …]``, …) loads at once, and then costs
10–17 s of CPU and gigabytes as soon as anything walks it as a tree: validation, a copy, JSON
(mockoss issue 9). :func:`check_expansion` measures what the aliases would add to the tree, in
time linear in the distinct nodes (each node's size is computed once), and refuses it past a
limit, before anything walks it. Recursive aliases (``&a [*a]``) are refused too.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

__all__ = [
    "MAX_EXPANDED_NODES",
    "MAX_HEADER_NODES",
    "PLAIN_TAGS",
    "YamlLimitError",
    "check_expansion",
    "construct",
    "load_plain",
]

#: Nodes a scenario file's aliases may add when expanded (each use counts its anchor's whole tree;
#: the file's own nodes count nothing): far above any hand-written use of anchors.
MAX_EXPANDED_NODES = 2_000_000
#: Nodes the aliases of one ``X-Mockoss-Switch`` value may add.
MAX_HEADER_NODES = 10_000
#: Tags of the values a switch may take (what YAML resolves plain scalars, lists and mappings
#: to); an explicit ``!!binary``, ``!!set``, ``!!python/…`` or ``!custom`` tag is refused.
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
)


class YamlLimitError(ValueError):
    """The YAML is refused; ``line`` is the 1-based line of the node at fault (``None``: unknown),
    ``field`` its place in the document (``rules[0].steps``; ``None``: not known)."""

    def __init__(self, message: str, line: int | None, field: str | None = None) -> None:
        super().__init__(message)
        self.line, self.field = line, field


def check_expansion(root: yaml.Node | None, limit: int = MAX_EXPANDED_NODES) -> int:
    """The number of nodes ``root``'s aliases add when the document is expanded: every use of an
    alias counts the whole tree of its anchor again (an alias inside an aliased tree, as often as
    that tree is used); the document's own nodes count nothing (a plain document is bounded by its
    size: :data:`mockoss.scenario.loader.MAX_SCENARIO_BYTES`, a header's size).

    Linear in the distinct nodes of the document (each node's expanded size is computed once,
    memoised by node identity). Before session 16 every node counted: a plain 14 MB scenario of
    200,000 steps (~2.1 million nodes, no alias) was refused as a "billion laughs" after its
    100 s parse (the sixteenth session's breaker, item 10).

    Raises:
        YamlLimitError: aliases add more than ``limit`` nodes, or an alias inside its own anchor.
    """
    if root is None:
        return 0
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    added = 0

    def size(node: yaml.Node) -> int:
        nonlocal added
        key = id(node)
        known = sizes.get(key)
        if known is not None:  # a node met again: an alias, which expands to its whole tree again
            added += known
            if added > limit:
                raise YamlLimitError(
                    f"YAML aliases expand to more than {limit:,} nodes beyond the file's own (nested aliases, the "
                    "'billion laughs' shape); write the values out or use fewer nested aliases",
                    node.start_mark.line + 1,
                )
            return known
        if key in open_nodes:
            raise YamlLimitError("recursive YAML alias (a node that contains itself)", node.start_mark.line + 1)
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item)
        elif isinstance(node, yaml.MappingNode):
            for name, value in node.value:
                total += size(name) + size(value)
        open_nodes.discard(key)
        sizes[key] = total
        return total

    try:
        size(root)
    except RecursionError:
        raise YamlLimitError("YAML nested too deeply", root.start_mark.line + 1) from None
    return added


def _check_tags(node: yaml.Node, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    if node.tag not in PLAIN_TAGS:
        raise YamlLimitError(f"YAML tag {node.tag!r} is not allowed here (plain values only)", node.start_mark.line + 1)
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_tags(item, seen)
    elif isinstance(node, yaml.MappingNode):
        for name, value in node.value:
            _check_tags(name, seen)
            _check_tags(value, seen)


_INT_TAG = "tag:yaml.org,2002:int"


def _int_digits_limit() -> int:
    """Python's limit on the decimal digits ``int(text)`` converts (``sys.get_int_max_str_digits``,
    4,300 by default since CPython 3.11 (gh-95778); 0 means none)."""
    return sys.get_int_max_str_digits()


def _check_int(node: yaml.ScalarNode, limit: int, field: str) -> None:
    """Refuse a YAML integer ``int()`` would not convert: PyYAML's ``construct_yaml_int``
    (yaml/pyyaml@6.0.2:lib/yaml/constructor.py) calls ``int(value)`` on the decimal digits, which
    raises ``ValueError`` past ``limit`` digits (hexadecimal, octal and binary ones have no limit)."""
    value = node.value.replace("_", "").lstrip("+-")
    if value[:2].lower() in ("0x", "0o", "0b") or ":" in value:
        return
    if len(value) > limit:
        raise YamlLimitError(
            f"an integer of {len(value):,} digits, above the {limit:,} digits Python converts "
            "(sys.get_int_max_str_digits); write it as a string or a smaller number",
            node.start_mark.line + 1,
            field,
        )


def _field(parent: str, part: object) -> str:
    """``rules`` + ``0`` → ``rules[0]``; ``rules[0]`` + ``steps`` → ``rules[0].steps`` (the
    field spelling of :func:`mockoss.scenario.locate.loc_text`)."""
    if isinstance(part, int):
        return f"{parent}[{part}]"
    return f"{parent}.{part}" if parent else str(part)


def construct(loader: yaml.SafeLoader, root: yaml.Node) -> Any:
    """``loader.construct_document(root)``, with what PyYAML's constructors raise as a bare
    ``ValueError`` (an integer past Python's digit limit: issue 9 review, finding 10) raised as
    :class:`YamlLimitError` with the line of the value at fault.

    Raises:
        YamlLimitError: a value no constructor can build.
        yaml.YAMLError: PyYAML's own construction errors (their marks have line and column).
    """
    limit = _int_digits_limit()
    if limit:
        seen: set[int] = set()
        pending: list[tuple[yaml.Node, str]] = [(root, "")]
        while pending:  # a loop over a stack: nesting as deep as the composer allows is fine
            node, field = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, yaml.ScalarNode):
                if node.tag == _INT_TAG:
                    _check_int(node, limit, field or "(top level)")
            elif isinstance(node, yaml.SequenceNode):
                pending.extend((item, _field(field, i)) for i, item in enumerate(node.value))
            elif isinstance(node, yaml.MappingNode):
                for name, value in node.value:
                    label = name.value if isinstance(name, yaml.ScalarNode) else "(key)"
                    pending.append((name, _field(field, label)))
                    pending.append((value, _field(field, label)))
    try:
        return loader.construct_document(root)
    except yaml.YAMLError:
        raise
    except (ValueError, OverflowError) as exc:  # a constructor's own error without a mark
        raise YamlLimitError(f"invalid YAML value: {exc}", None) from None


def single_node(loader: yaml.SafeLoader) -> yaml.Node | None:
    """``loader.get_single_node()``, with YAML nested deeper than PyYAML's composer recurses
    (``[[[…]]]``, 5,000 levels: a ``RecursionError``, which a scenario upload and a switch header
    turned into a bare 500) raised as :class:`YamlLimitError`."""
    try:
        return loader.get_single_node()
    except RecursionError:
        raise YamlLimitError("invalid YAML: nested too deep (more levels than the YAML parser recurses)", None) from None


def load_plain(text: str, limit: int = MAX_HEADER_NODES) -> Any:
    """Parse one YAML value as :func:`yaml.safe_load` does, refusing explicit tags and aliases
    that add more than ``limit`` nodes.

    Raises:
        YamlLimitError: a tag or the expansion limit.
        yaml.YAMLError: not valid YAML (its message has line and column).
    """
    loader = yaml.SafeLoader(text)
    try:
        root = single_node(loader)
        if root is None:
            return None
        check_expansion(root, limit)
        _check_tags(root, set())
        return construct(loader, root)
    finally:
        loader.dispose()
