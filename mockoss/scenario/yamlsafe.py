"""YAML that cannot explode: alias expansion bounded, only plain JSON-like values.

PyYAML builds an alias as a shared reference, so a 481-byte file of nested aliases (the "billion
laughs" shape: ``a: &a [x, x, …]``, ``b: &b [*a, *a, …]``, …) loads at once, and then costs
10–17 s of CPU and gigabytes as soon as anything walks it as a tree: validation, a copy, JSON
(mockoss issue 9). :func:`check_expansion` measures what the aliases would add to the tree, in
time linear in the distinct nodes (each node's size is computed once), and refuses it past a
limit, before anything walks it. Recursive aliases (``&a [*a]``) are refused too.

:func:`parse` composes with libyaml's parser (PyYAML's C binding, ``yaml.CSafeLoader``) when
PyYAML has it (~3x faster with construction), and gives the very nodes, data and errors the
pure-Python ``yaml.SafeLoader`` gives (what differs and how: :func:`parse`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import yaml

from mockoss.scenario.yaml_c_diverge import diverges, python_only

__all__ = [
    "MAX_EXPANDED_NODES",
    "MAX_HEADER_NODES",
    "PLAIN_TAGS",
    "YamlLimitError",
    "check_expansion",
    "construct",
    "load_plain",
    "parse",
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


def construct(loader: Any, root: yaml.Node) -> Any:
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


def single_node(loader: Any) -> yaml.Node | None:
    """``loader.get_single_node()``, with YAML nested deeper than PyYAML's composer recurses
    (``[[[…]]]``, 5,000 levels: a ``RecursionError``, which a scenario upload and a switch header
    turned into a bare 500) raised as :class:`YamlLimitError`."""
    try:
        return loader.get_single_node()
    except RecursionError:
        raise YamlLimitError(
            "invalid YAML: nested too deep (more levels than the YAML parser recurses)", None
        ) from None


def load_plain(text: str, limit: int = MAX_HEADER_NODES) -> Any:
    """Parse one YAML value as :func:`yaml.safe_load` does, refusing explicit tags and aliases
    that add more than ``limit`` nodes.

    Raises:
        YamlLimitError: a tag or the expansion limit.
        yaml.YAMLError: not valid YAML (its message has line and column).
    """

    def build(loader: Any, root: yaml.Node | None) -> Any:
        if root is None:
            return None
        check_expansion(root, limit)
        _check_tags(root, set())
        return construct(loader, root)

    return parse(text, build)


_T = TypeVar("_T")
#: libyaml's parser with PyYAML's safe constructor and resolver; ``None`` without libyaml.
_C_LOADER: Any = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None


def parse(text: str, build: Callable[[Any, yaml.Node | None], _T]) -> _T:
    """``build(loader, root)`` on the single document of ``text``, composed by libyaml's parser
    (``yaml.CSafeLoader``: a 1.5 MB recording-like file composed and constructed in 3.8 s of CPU
    instead of 11.6 s) when PyYAML has it, else by PyYAML's pure-Python
    ``yaml.SafeLoader``: the same nodes (tags from PyYAML's own resolver, which both call; the
    same ``start_mark.line``, checked on every node of the shipped scenarios and recordings by
    tests/scenario/test_yaml_c_parser.py), so the same data from ``build``. ``build`` composes
    nothing itself; it may raise.

    What libyaml does differently, and how it is kept out of sight:

    - Invalid YAML: libyaml's messages are its own ("did not find expected key", marks without
      the quoted line). On any ``yaml.YAMLError`` (or a text UTF-8 cannot encode, which libyaml's
      binding raises as ``UnicodeEncodeError``) the C path is dropped and the text parsed again
      by ``yaml.SafeLoader``, whose error (today's text) is raised; also when libyaml refuses
      what PyYAML takes (``%YAML 1.3``, an unknown directive, a BOM inside the text, nesting
      past libyaml's 1,000 levels), so the pure-Python result stands. An error ``build`` raises
      is not parsed again (``build`` ran twice on a construction error before session 18): a
      ``yaml.MarkedYAMLError`` of construction (an unknown tag, an unhashable key) gets the
      marks PyYAML's reader makes (:func:`_python_marks`), so its text is PyYAML's.
    - What libyaml takes and PyYAML refuses, or reads otherwise: tabs as white space, a block
      scalar header with ``#`` glued on, and the line of an empty value at the end of a text
      without a final line feed (such texts go to PyYAML:
      :func:`mockoss.scenario.yaml_c_diverge.python_only`); ``?`` in a flow plain scalar and a bare
      ``!`` on an empty value (parsed again by PyYAML: :func:`mockoss.scenario.yaml_c_diverge.diverges`,
      which reads the text and walks the collections only).
      Found by a differential soup of YAML's indicators (190,000 snippets, then 0 differences).
    - Nesting: libyaml composes 1,000 levels, PyYAML's recursive composer fewer (the caller's
      stack decides); a document nested past
      :data:`mockoss.scenario.yaml_c_diverge.C_MAX_DEPTH` (50) is parsed again by PyYAML.
    - A plain scalar's ``style`` is ``''`` there, ``None`` here; nothing reads it.

    Raises:
        YamlLimitError: see :func:`single_node`; and what ``build`` raises.
        yaml.YAMLError: not valid YAML, PyYAML's own error.
    """
    if _C_LOADER is not None and not python_only(text):
        loader, root = _compose_c(text)
        try:
            if root is not _PARSE_AGAIN:
                # build runs once: what it raises is the answer (a ConstructorError given PyYAML's
                # marks: _python_marks), not a reason to parse and build again.
                try:
                    return build(loader, root)
                except yaml.MarkedYAMLError as exc:
                    _python_marks(exc, text)
                    raise
        finally:
            if loader is not None:
                loader.dispose()
    loader = yaml.SafeLoader(text)
    try:
        return build(loader, single_node(loader))
    finally:
        loader.dispose()


#: :func:`_compose_c`'s root for a text PyYAML must parse.
_PARSE_AGAIN: Any = object()


def _compose_c(text: str) -> tuple[Any, Any]:
    """``(loader, root)``: libyaml's loader (``None`` if it refused ``text`` outright: a lone
    surrogate, which its binding cannot encode as UTF-8) and the single document it composed,
    or :data:`_PARSE_AGAIN` when libyaml refused the text or its tree may not be PyYAML's
    (:func:`mockoss.scenario.yaml_c_diverge.diverges`). The caller disposes of the loader."""
    loader = None
    try:
        loader = _C_LOADER(text)
        root = loader.get_single_node()
    except (yaml.YAMLError, UnicodeError):
        return loader, _PARSE_AGAIN  # PyYAML's verdict and message
    return loader, root if root is None or not diverges(root, text) else _PARSE_AGAIN


def _python_marks(exc: yaml.MarkedYAMLError, text: str) -> None:
    """Give ``exc`` (raised while building libyaml's tree) the marks PyYAML's reader makes, so
    that its text quotes the line under a caret as PyYAML's does: libyaml's marks have no buffer
    (no snippet), and count from after a byte order mark (PyYAML's count it). A string's marks
    in PyYAML are ``Mark("<unicode string>", index, line, column, text + "\\0", index)``
    (yaml/pyyaml@6.0.2:lib/yaml/reader.py ``Reader.__init__``, ``get_mark``)."""
    shift = 1 if text.startswith("\ufeff") else 0
    buffer = None
    for field in ("context_mark", "problem_mark"):
        mark = getattr(exc, field, None)
        if mark is not None and mark.buffer is None:
            buffer = text + "\0" if buffer is None else buffer
            index = mark.index + shift
            setattr(exc, field, yaml.Mark(mark.name, index, mark.line, mark.column, buffer, index))
