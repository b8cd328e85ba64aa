"""The package's static import graph, read from the source with `ast` (nothing is imported).

One walk serves three users: asset code versions (core.code_versions), the layering test and the
`marin versions` table. Every form of import counts, wherever it sits in a file (module level,
inside functions, under TYPE_CHECKING): `import a.b`, `from a import b` (b a submodule or a name),
and relative imports. Importing `a.b.c` runs `a/__init__` and `a/b/__init__` too, so those count.
A module named whole by a string literal (`[sys.executable, "-m", "marin_assets.data.curate.fasttext_train"]`)
is code the naming module runs in a subprocess, and a `Registry(..., package="pkg")` call imports the
modules of pkg that import its module when it discovers its items (core.registries): `run_graph` keeps those edges and
`closure` follows them, so what a subprocess runs or a registry discovers is versioned with the asset
that uses it (not a static import: the layering and cycle checks see imports only).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = "marin_assets"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their __init__.py)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _with_parents(name: str, known: dict[str, Path]) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & known.keys()


def _discovered_package(call: ast.Call, files: dict[str, Path]) -> str | None:
    """The package a `Registry(..., package="pkg")` call discovers its items in."""
    for keyword in call.keywords:
        if keyword.arg == "package" and isinstance(keyword.value, ast.Constant) and keyword.value.value in files:
            return keyword.value.value
    return None


# package_dir -> the module files its cached import_graph was read from: closure and code_version
# look modules up there instead of walking the folder again (one walk per load, not two per asset).
_GRAPH_FILES: dict[Path, dict[str, Path]] = {}
# package_dir -> module -> the package modules it names whole in a string (runs as `python -m`).
_RUN_EDGES: dict[Path, dict[str, frozenset[str]]] = {}
# package_dir -> module -> (absolute imports, identifiers): what layering.module_kind reads, gathered by
# the same walk so a definitions load parses each module once, not twice.
_NAMES: dict[Path, dict[str, tuple[frozenset[str], frozenset[tuple[str, str]]]]] = {}


@functools.cache
def import_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, frozenset[str]]:
    """module -> the package modules it imports directly (its own parent packages excluded)."""
    files = _GRAPH_FILES[package_dir] = module_files(package_dir)
    graph, runs, discovering, direct, names = {}, {}, {}, {}, {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        direct[module] = targets = set()  # the modules named in its import statements, parents aside
        named: set[str] = set()
        absolute: set[str] = set()
        aliases: dict[str, str] = {}  # `import dagster as dg` -> {"dg": "dagster"}
        qualified: set[tuple[str, str]] = set()  # `dg.asset` -> ("dg", "asset")
        imported_from: set[tuple[str, str]] = set()  # `from dagster import asset` -> ("dagster", "asset")
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in files:
                named |= _with_parents(node.value, files)
            elif isinstance(node, ast.Call) and (package := _discovered_package(node, files)):
                discovering[module] = package  # Registry(kind, package="pkg"): resolved below
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    found |= _with_parents(alias.name, files)
                    targets.add(alias.name)
                    absolute.add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, is_package, node.level, node.module)
                found |= _with_parents(target, files)
                targets.add(target)
                for alias in node.names:  # `from pkg import submodule`
                    found |= _with_parents(f"{target}.{alias.name}", files)
                if node.level == 0 and node.module:
                    absolute.add(node.module)
                    imported_from |= {(node.module, a.asname or a.name) for a in node.names}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                qualified.add((node.value.id, node.attr))
        graph[module] = frozenset(found - {module} - _with_parents(module, files))
        runs[module] = frozenset(named - {module} - _with_parents(module, files))
        # what layering.module_kind reads: imported modules, and the names used through / imported from them
        used = {(aliases[base], attr) for base, attr in qualified if base in aliases} | imported_from
        names[module] = (frozenset(absolute), frozenset(used))
    for module, package in discovering.items():  # what the registry imports: the package's modules importing it
        found = {m for m in files if m.startswith(f"{package}.") and module in direct[m]}
        runs[module] = runs[module] | frozenset(found - {module})
    _RUN_EDGES[package_dir], _NAMES[package_dir] = runs, names
    return graph


def run_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, frozenset[str]]:
    """module -> the package modules it runs in a subprocess (names whole in a string literal)."""
    import_graph(package_dir)
    return _RUN_EDGES[package_dir]


def module_names(module: str, package_dir: Path = PACKAGE_DIR) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """(the modules it imports by absolute name, the (module, name) pairs it uses through an import alias or
    imports from a module), from the same walk."""
    import_graph(package_dir)
    return _NAMES[package_dir][module]


def graph_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """module_files(package_dir) as import_graph(package_dir) read them (same cache, same modules)."""
    import_graph(package_dir)
    return _GRAPH_FILES[package_dir]


def closure(modules: list[str] | tuple[str, ...], package_dir: Path = PACKAGE_DIR) -> frozenset[str]:
    """The modules themselves, their parent packages and every package module they reach (by import
    or by running it in a subprocess)."""
    graph, runs, files = import_graph(package_dir), run_graph(package_dir), graph_files(package_dir)
    seen: set[str] = set()
    frontier = [p for m in modules for p in _with_parents(m, files)]
    while frontier:
        module = frontier.pop()
        if module not in seen:
            seen.add(module)
            frontier.extend(graph[module] | runs[module])
    return frozenset(seen)


def find_cycle(graph: dict[str, frozenset[str]]) -> list[str] | None:
    """One import cycle (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep] if dep in path else [*path, dep]
            if dep not in state and (cycle := visit(dep, [*path, dep])):
                return cycle
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module, [module])):
            return cycle
    return None
