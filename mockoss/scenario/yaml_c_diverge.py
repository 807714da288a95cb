"""Where libyaml's reading of a scenario's YAML may differ from PyYAML's, and how that is found.

:func:`mockoss.scenario.yamlsafe.parse` composes with libyaml (``yaml.CSafeLoader``) and must give
what the pure-Python ``yaml.SafeLoader`` gives. A differential soup of YAML's indicators
(tests/scenario/test_yaml_c_parser.py; 190,000 snippets while it was written) found the texts
libyaml reads otherwise: :func:`python_only` sends them to PyYAML before any parse; the trees
:func:`diverges` flags are parsed again by PyYAML.

:func:`diverges` used to walk every node of the tree after each libyaml parse (now
:func:`tree_diverges`). It now reads the text first: without a ``!`` that may start a tag or a
``*`` that may be an alias, a block scalar cannot diverge, so only the collections are walked, and
a flow collection's own text (its marks' span) says whether anything inside it needs a look.
Measured (session 18, CPU medians of 5, GC on, a loaded 2-CPU machine), walk then now: 2.5 MB
hand-written scenario (5,000 rules, 160,000 nodes) 153 -> 105 ms; 2.7 MB recording (3,000 steps)
46 -> 32 ms; 2.5 MB of one-line flow rules (22,500) 399 -> 163 ms. That is 1-4% of the parse
(3.8 s, 1.3 s, 10.5 s: composition and construction, more than half of it the garbage collector
running over the growing tree). A text-only verdict is not sound for such files: whether a ``?``
sits in a flow collection, and how deep flow collections nest, takes the tree (a quoted ``]`` or
a comment hides where a collection ends), and a regex pass over 2.5 MB costs 50-80 ms by itself.
"""

from __future__ import annotations

import re

import yaml

__all__ = ["C_MAX_DEPTH", "diverges", "python_only", "tree_diverges"]

#: A block scalar's header with a comment and no space before it (``|#``, ``>1#``): libyaml
#: takes it, PyYAML refuses it ("expected chomping or indentation indicators, but found '#'",
#: yaml/pyyaml@6.0.2:lib/yaml/scanner.py ``scan_block_scalar_indicators``).
_BLOCK_HEADER_COMMENT = re.compile(r"[|>][-+0-9]*#")


def python_only(text: str) -> bool:
    """Whether ``text`` must go to the pure-Python parser: a tab, which libyaml (0.2.5) takes as
    white space where PyYAML refuses it (``a:<TAB>b``, ``a: b<TAB>c``, ``a: b<TAB># c`` load
    there, and are "found character '\\t' that cannot start any token" here); a block scalar header
    with a comment glued on (:data:`_BLOCK_HEADER_COMMENT`); or text that does
    not end with a line feed: at the end of the stream libyaml moves its mark to a new line
    ("Force new line", yaml/libyaml@0.2.5:src/scanner.c ``yaml_parser_fetch_stream_end``), so an
    empty value there (``steps:`` as the last line) is a line further down than PyYAML puts it,
    and error messages name that line. A short ``X-Mockoss-Switch`` value has no line feed: it is
    parsed here, as small as it is."""
    return "\t" in text or not text.endswith("\n") or _BLOCK_HEADER_COMMENT.search(text) is not None


#: Nesting past which a document libyaml composed is parsed again by PyYAML: PyYAML's composer
#: recurses (two frames a level) and gives up, as :func:`mockoss.scenario.yamlsafe.single_node`'s
#: error, somewhere between ~200 and ~490 levels depending on the caller's stack; libyaml goes to
#: 1,000. Scenario files nest ~10 levels.
C_MAX_DEPTH = 50

_STR_TAG = "tag:yaml.org,2002:str"


def tree_diverges(root: yaml.Node, depth: int = 0) -> bool:
    """Whether libyaml's tree of a document (``root`` at ``depth`` collections down) may not be
    what PyYAML makes of it, node by node:

    - nested deeper than :data:`C_MAX_DEPTH`;
    - a plain scalar holding ``?`` inside a flow collection (``[a?b]``), which libyaml 0.2.5
      allows (yaml/libyaml PR 105, "Allow question marks in plain scalars in flow collections";
      yaml/pyyaml issue 128 is open) and PyYAML's ``scan_plain`` ends at
      (yaml/pyyaml@6.0.2:lib/yaml/scanner.py), refusing the document;
    - an empty plain scalar tagged ``str``: a bare ``!`` on an empty value is ``''`` there
      (yaml/libyaml@0.2.5:src/parser.c ``yaml_parser_parse_node``: implicit only without a tag)
      and ``None`` here (yaml/pyyaml@6.0.2:lib/yaml/parser.py ``parse_node``: ``tag == '!'`` is
      implicit); an empty ``!!str`` value is sent to PyYAML too, which is harmless.

    No recursion; every node is visited (an aliased one again only deeper)."""
    deepest: dict[int, int] = {}  # a node met again (an alias) is walked again only deeper: <= C_MAX_DEPTH times
    pending = [(root, depth, False)]
    while pending:
        node, depth, flow = pending.pop()
        if isinstance(node, yaml.ScalarNode):
            if not node.style and (node.value == "" and node.tag == _STR_TAG or flow and "?" in node.value):
                return True
            continue
        if depth >= C_MAX_DEPTH:
            return True
        if deepest.get(id(node), -1) >= depth:
            continue
        deepest[id(node)] = depth
        inner = bool(node.flow_style)
        for child in node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]:
            pending.append((child, depth + 1, inner))
    return False


def _may_start(text: str, indicator: str) -> bool:
    """Whether ``text`` holds ``indicator`` (``!``: a tag; ``*``: an alias) where a token may start.
    A token starts where the previous one ended or after white space, and the tokens that may end
    just before one glued to them without an error are a quoted scalar and the flow and key/value
    indicators (``"a"!x``, ``[*a]``, ``{"k":!x}``); an indicator after a letter, digit, ``_``,
    ``.``, ``)``, ``*`` or ``!`` is inside a plain scalar, a quoted one, a comment, a block scalar or
    a tag (``Hi!``, ``**bold**``, ``!!str``), or after an anchor's or alias's name, which libyaml and
    PyYAML both refuse (``&a!x``). So this errs only towards True. ``str.find`` from one indicator to
    the next (~2.5 ms for a 2.5 MB scenario with 4,000 ``!``; a look-behind regex took 80 ms)."""
    at = text.find(indicator)
    while at >= 0:
        if at == 0:
            return True
        before = text[at - 1]
        if not (before.isalnum() or before in "_.)!*"):
            return True
        at = text.find(indicator, at + 1)
    return False


def _flow_is_plain(text: str, shift: int, node: yaml.Node, depth: int) -> bool:
    """Whether the flow collection ``node`` (``depth`` collections down) and everything in it are
    beyond doubt from its own text: the span of its marks (libyaml counts characters, as ``str``
    does, from after a byte order mark: ``shift``) opens and closes with a bracket, holds no ``?``
    (divergence 2 of :func:`tree_diverges`) and no ``*`` (an alias brings a tree from elsewhere),
    and too few brackets for :data:`C_MAX_DEPTH` (each nested collection opens with one, or is a
    ``[k: v]`` pair's mapping inside one: at most two levels a bracket)."""
    start, end = node.start_mark.index + shift, node.end_mark.index + shift
    return (
        start < end
        and text[start] in "[{"
        and text[end - 1] in "]}"
        and text.find("?", start, end) < 0
        and text.find("*", start, end) < 0
        and depth + 2 * (text.count("[", start, end) + text.count("{", start, end)) < C_MAX_DEPTH
    )


def diverges(root: yaml.Node, text: str) -> bool:
    """Whether libyaml's tree ``root`` of ``text`` may not be what PyYAML makes of it: True
    whenever :func:`tree_diverges` is (tests/scenario/test_yaml_diverge.py checks it on the
    differential soup and on the shapes below), walking the collections only.

    The text is read first. With a ``!`` that may start a tag, or a ``*`` that may be an alias
    (:func:`_may_start`), the tree is walked node by node (:func:`tree_diverges`). Without a tag
    no scalar is tagged, so a scalar can diverge only inside a flow collection; without an alias
    the tree is a tree (no node met twice). Then the collections are walked a level at a time,
    block scalars unread: a block collection for its depth and children, a flow one passed on its
    own text (:func:`_flow_is_plain`: no ``?``, few brackets) or else walked node by node. A scalar
    document is a block scalar. Measured in the session 18 report (2.5 MB scenarios)."""
    if _may_start(text, "!") or _may_start(text, "*"):
        return tree_diverges(root)
    scalar, sequence = yaml.ScalarNode, yaml.SequenceNode
    if root.__class__ is scalar:
        return False
    shift = 1 if text.startswith("\ufeff") else 0  # libyaml's index starts after the byte order mark
    level: list[yaml.Node] = [root]
    depth = 0
    while level:
        if depth >= C_MAX_DEPTH:
            return True
        below: list[yaml.Node] = []
        add = below.append
        for node in level:
            if node.flow_style:
                if not _flow_is_plain(text, shift, node, depth) and tree_diverges(node, depth):
                    return True
            elif node.__class__ is sequence:
                below += [child for child in node.value if child.__class__ is not scalar]
            else:
                for key, value in node.value:
                    if key.__class__ is not scalar:
                        add(key)
                    if value.__class__ is not scalar:
                        add(value)
        level = below
        depth += 1
    return False
