"""No import circles in the package (mockoss issue 9, item 7).

Every ``import`` counts: at module level, inside functions (a deferred import is still a
dependency) and under ``if TYPE_CHECKING:`` (a circle of types is still a circle of layers).
Importing ``a.b.c`` also runs the packages ``a`` and ``a.b``, so those count too, except a module's
own enclosing packages (they are always initialised first: a package ``__init__`` re-exporting its
submodules is not a circle). The layers read
top-down: HTTP (``mockoss.server.app``, ``mockoss.upstream.proxy``) → server core → scenario and
profiles → Harmony.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mockoss

PACKAGE = Path(mockoss.__file__).parent

#: Circles left to cut, each with its owner's reason. Keep this empty: a new entry needs a plan.
KNOWN_CIRCLES: list[list[str]] = []


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _with_parents(name: str, known: dict[str, Path]) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & known.keys()


def import_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports (directly, anywhere in its source)."""
    known = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets |= _with_parents(alias.name, known)
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, path.name == "__init__.py", node)
                targets |= _with_parents(source, known)
                for alias in node.names:
                    targets |= _with_parents(f"{source}.{alias.name}", known)
        own = {module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)}
        graph[module] = targets - {module} - own
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _path(graph: dict[str, set[str]], component: list[str]) -> str:
    """One circle inside ``component``, as ``a → b → a``."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                chain = [node]
                while chain[-1] != start:
                    chain.append(previous[chain[-1]])
                return " → ".join([start, *reversed(chain[:-1]), start]) if len(chain) > 1 else f"{start} → {start}"
            if target not in previous:
                previous[target] = node
                queue.append(target)
    return ", ".join(component)


def test_the_checker_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert _path(graph, ["a", "b", "c"]) == "a → b → c → a"


def test_the_checker_sees_deferred_and_type_checking_imports() -> None:
    graph = import_graph()
    # mockoss.server.app imports its HTTP helpers at module level; mockoss.cli defers the
    # server import into _serve(): both must show as edges.
    assert "mockoss.server.core" in graph["mockoss.server.app"]
    assert "mockoss.server.core" in graph["mockoss.cli"]


def test_no_import_circles() -> None:
    graph = import_graph()
    found = [component for component in circles(graph) if component not in KNOWN_CIRCLES]
    assert not found, "import circles:\n" + "\n".join(_path(graph, component) for component in found)
