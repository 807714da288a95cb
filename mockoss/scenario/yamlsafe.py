"""YAML that cannot explode: alias expansion bounded, only plain JSON-like values.

PyYAML builds an alias as a shared reference, so a 481-byte file of nested aliases (the "billion
laughs" shape: ``a: &a [x, x, …]``, ``b: &b [*a, *a, …]``, …) loads at once, and then costs
10–17 s of CPU and gigabytes as soon as anything walks it as a tree: validation, a copy, JSON
(mockoss issue 9). :func:`check_expansion` measures the tree the aliases would expand to, in time
linear in the distinct nodes (each node's size is computed once), and refuses it past a limit,
before anything walks it. Recursive aliases (``&a [*a]``) are refused too.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = [
    "MAX_EXPANDED_NODES",
    "MAX_HEADER_NODES",
    "PLAIN_TAGS",
    "YamlLimitError",
    "check_expansion",
    "load_plain",
]

#: Nodes a scenario file may expand to (aliases counted as often as they are used): far above
#: any hand-written or recorded scenario (a 10,000-request recording is ~150,000 nodes).
MAX_EXPANDED_NODES = 2_000_000
#: Nodes one ``X-Mockoss-Switch`` value may expand to.
MAX_HEADER_NODES = 10_000
#: Tags of the values a switch may take (what YAML resolves plain scalars, lists and mappings
#: to); an explicit ``!!binary``, ``!!set``, ``!!python/…`` or ``!custom`` tag is refused.
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
)


class YamlLimitError(ValueError):
    """The YAML is refused; ``line`` is the 1-based line of the node at fault (``None``: unknown)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def check_expansion(root: yaml.Node | None, limit: int = MAX_EXPANDED_NODES) -> int:
    """The number of nodes ``root`` expands to, aliases counted at every use.

    Linear in the distinct nodes of the document (memoised by node identity).

    Raises:
        YamlLimitError: more than ``limit`` nodes, or an alias inside its own anchor.
    """
    if root is None:
        return 0
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in open_nodes:
            raise YamlLimitError("recursive YAML alias (a node that contains itself)", node.start_mark.line + 1)
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item)
                if total > limit:
                    break
        elif isinstance(node, yaml.MappingNode):
            for name, value in node.value:
                total += size(name) + size(value)
                if total > limit:
                    break
        open_nodes.discard(key)
        if total > limit:
            raise YamlLimitError(
                f"YAML aliases expand to more than {limit:,} nodes (nested aliases, the 'billion laughs' "
                "shape); write the values out or use fewer nested aliases",
                node.start_mark.line + 1,
            )
        sizes[key] = total
        return total

    try:
        return size(root)
    except RecursionError:
        raise YamlLimitError("YAML nested too deeply", root.start_mark.line + 1) from None


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


def single_node(loader: yaml.SafeLoader) -> yaml.Node | None:
    """``loader.get_single_node()``, with YAML nested deeper than PyYAML's composer recurses
    (``[[[…]]]``, 5,000 levels: a ``RecursionError``, which a scenario upload and a switch header
    turned into a bare 500) raised as :class:`YamlLimitError`."""
    try:
        return loader.get_single_node()
    except RecursionError:
        raise YamlLimitError("invalid YAML: nested too deep (more levels than the YAML parser recurses)", None) from None


def load_plain(text: str, limit: int = MAX_HEADER_NODES) -> Any:
    """Parse one YAML value as :func:`yaml.safe_load` does, refusing explicit tags and expansions
    past ``limit`` nodes.

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
        return loader.construct_document(root)
    finally:
        loader.dispose()
