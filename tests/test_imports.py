"""The import graph of lgkit: no circles, lgkit.sw imports nothing else, rooms import downwards."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

LGKIT = Path(__file__).resolve().parents[1] / "lgkit"

# Packages of lgkit, lowest layer first: a package imports only from layers below its own (and
# itself); packages of one layer do not import each other.
LAYERS = [
    {"sw"},
    {"core"},
    {"control", "measure", "workloads", "fabric", "course"},
    {"net", "sim"},
    {"schemes"},
    {"reproduce", "tofino"},
    {"cli"},
]

# Rooms of a package, lowest first: a room imports only from rooms before it (and itself).
ROOM_ORDER = {
    "lgkit.sw": ["lang", "exec", "p4runtime", "switch", "tools"],
    "lgkit.net": ["lifecycle", "inject", "spec", "testbed"],
}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(LGKIT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (annotations only, never executed)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(n) for n in ast.walk(node))
    return hidden


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement loads: `from m import x` loads m.x if that is a
    module, else m (the name x is then defined in m)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if node.module else package
    return [f"{base}.{alias.name}" for alias in node.names]


@cache
def _graph() -> dict[str, dict[str, bool]]:
    """module -> {imported lgkit module: executed at run time (False: TYPE_CHECKING only)}.
    Imports inside functions count: deferring an import hides a circle, it does not break it."""
    files = {_module_name(p): p for p in LGKIT.rglob("*.py")}
    modules = {name for name, _ in files}
    graph: dict[str, dict[str, bool]] = {}
    for (module, is_package), path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        hidden = _type_checking_only(tree)
        edges = graph.setdefault(module, {})
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, module, is_package):
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges[name] = edges.get(name, False) or id(node) not in hidden
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def _room(module: str, package: str) -> str | None:
    rest = module.removeprefix(package + ".").split(".")
    return rest[0] if module.startswith(package + ".") and len(rest) > 1 else None


def _layer(module: str) -> int:
    """The layer of a module of lgkit (lgkit/__init__.py counts as the lowest)."""
    package = module.split(".")[1] if "." in module else ""
    return next((i for i, layer in enumerate(LAYERS) if package in layer), -1)


def test_graph_sees_the_whole_package() -> None:
    graph = _graph()
    assert "lgkit.sw.exec.pipeline" in graph and "lgkit.net.cli" in graph
    assert "lgkit.sw.exec.arch.registry" in graph["lgkit.sw.exec.pipeline"]


def test_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_no_import_circles() -> None:
    graph = _graph()
    runtime = {m: {d for d, executed in deps.items() if executed} for m, deps in graph.items()}
    circles = _circles(runtime)
    assert not circles, "import circles between lgkit modules:\n" + "\n".join(
        " <-> ".join(c) for c in circles
    )


def test_sw_imports_nothing_else_from_lgkit() -> None:
    bad = [f"{m} imports {d}" for m, deps in _graph().items() if m.startswith("lgkit.sw")
           for d in deps if not (d == "lgkit.sw" or d.startswith("lgkit.sw."))]
    assert not bad, "lgkit.sw must import nothing else from lgkit:\n" + "\n".join(sorted(bad))


def test_rooms_import_downwards() -> None:
    bad = []
    for package, order in ROOM_ORDER.items():
        for module, deps in _graph().items():
            here = _room(module, package)
            for dep in deps:
                there = _room(dep, package)
                if here in order and there in order and order.index(there) > order.index(here):
                    bad.append(f"{module} ({here}) imports {dep} ({there})")
    assert not bad, "rooms import only rooms below them (see docs/design.md):\n" + "\n".join(
        sorted(bad)
    )


def test_every_package_has_a_layer() -> None:
    packages = {m.split(".")[1] for m in _graph() if "." in m}
    assert packages == set().union(*LAYERS), "add new packages to LAYERS (and docs/design.md)"


def test_packages_import_downwards() -> None:
    bad = []
    for module, deps in _graph().items():
        for dep in deps:
            here, there = _layer(module), _layer(dep)
            if there > here or (there == here and dep.split(".")[1] != module.split(".")[1]):
                bad.append(f"{module} (layer {here}) imports {dep} (layer {there})")
    assert not bad, "packages import only layers below them (see docs/design.md):\n" + "\n".join(
        sorted(bad)
    )
