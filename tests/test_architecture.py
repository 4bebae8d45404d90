"""The package's import graph: the layers are the package's folders, and they import downward only; no module
imports itself round a cycle.

Layers, lowest first: ``core`` (status codes, linear and spatial algebra, the robot and its dynamics) <
``integrate`` (Diffrax drivers, hybrid and constrained solves) < ``bodies`` / ``contact`` / ``actuation`` / ``io`` <
``scenarios`` < ``design`` < ``app``. Every module lives in one of these folders (the package ``__init__`` only
re-exports). Function-local imports count. A package ``__init__`` importing its own submodules is not a
dependency between modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "diffspace"
LAYERS = (("core",), ("integrate",), ("bodies", "contact", "actuation", "io"), ("scenarios",), ("design",), ("app",))
RANKS = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("diffspace",) + path.relative_to(PACKAGE).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _targets(mods: dict[str, Path], module: str, node) -> set[str]:
    package = module if mods[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    if isinstance(node, ast.ImportFrom):
        base = package
        for _ in range(node.level - 1):
            base = base.rsplit(".", 1)[0]
        base = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
        candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
    else:
        candidates = [alias.name for alias in node.names]
    found = set()
    for name in candidates:
        while name and name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in mods and name != module:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for module, path in mods.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(mods, module, node)
        if path.name == "__init__.py":
            edges = {e for e in edges if not e.startswith(module + ".")}
        graph[module] = edges
    return graph


def rank(module: str) -> int | None:
    parts = module.split(".")
    return RANKS.get(parts[1]) if len(parts) > 1 else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_every_module_lives_in_a_layer_folder():
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders - {"data"} == set(RANKS), f"package folders {sorted(folders)} vs layers {LAYERS}"
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules outside the layer folders: {loose}"
    unranked = [m for m in import_graph() if m != "diffspace" and rank(m) is None]
    assert not unranked, f"modules outside the layer folders: {unranked}"


def test_layers_import_downward_only():
    upward = [(m, t) for m, targets in import_graph().items() for t in targets
              if rank(m) is not None and rank(t) is not None and rank(t) > rank(m)]
    assert not upward, "upward imports: " + ", ".join(f"{m} -> {t}" for m, t in upward)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def _import_time_targets(module: str) -> set[str]:
    """What ``module`` imports when it is imported: its statements outside function bodies."""
    mods = _modules()
    found, pending = set(), list(ast.parse(mods[module].read_text()).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= _targets(mods, module, node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))
    return found


def test_top_level_package_imports_only_the_lower_layers():
    """``import diffspace`` stays light: at import time it reaches core, actuation and io only (the
    scenarios and the command line's cache are imported on first call of ``load_scenario`` / ``enable_cache``)."""
    top = _import_time_targets("diffspace")
    assert top, "no import found: the check reads nothing"
    assert all(rank(t) is not None and rank(t) <= RANKS["io"] for t in top), top
