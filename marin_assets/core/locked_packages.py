"""The locked versions of the third-party packages a piece of code uses, read from uv.lock.

Which packages: the top-level third-party imports of the covered modules (read with `ast`, as the
import graph is), mapped to their distributions, plus everything those depend on in the lock. So
a code version names no package by hand: upgrading pyspark changes the versions of the assets whose
code imports pyspark (or a package that depends on it), and no other.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

LOCK_FILE = Path(__file__).resolve().parents[2] / "uv.lock"


def normalize(name: str) -> str:
    """A distribution's name as uv.lock writes it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def _lock(lock_file: Path) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """package -> (its locked versions, the packages it depends on); {} without a lock file."""
    if not lock_file.exists():
        return {}
    out: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    for package in tomllib.loads(lock_file.read_text()).get("package", []):
        name = normalize(package["name"])
        versions, deps = out.get(name, ((), frozenset()))
        found = {normalize(d["name"]) for d in package.get("dependencies", [])}
        for group in package.get("optional-dependencies", {}).values():
            found |= {normalize(d["name"]) for d in group}
        out[name] = (tuple(sorted({*versions, str(package.get("version", ""))})), deps | found)
    return out


@functools.cache
def _distributions() -> dict[str, tuple[str, ...]]:
    found = importlib.metadata.packages_distributions()
    return {top: tuple(normalize(d) for d in dists) for top, dists in found.items()}


def third_party_imports(module_file: Path, package: str) -> frozenset[str]:
    """Top-level names the module imports that are neither the package's own nor the standard library."""
    return _imports(module_file.read_text(), package)


@functools.cache
def _imports(source: str, package: str) -> frozenset[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(n for n in names if n != package and n not in sys.stdlib_module_names)


def locked_versions(import_names, lock_file: Path = LOCK_FILE) -> dict[str, list[str]]:
    """distribution -> locked versions, for the imported names and every package they depend on."""
    lock, dists = _lock(lock_file), _distributions()
    frontier = [d for name in import_names for d in dists.get(name, (normalize(name),))]
    seen: set[str] = set()
    while frontier:
        name = frontier.pop()
        if name in seen or name not in lock:
            continue
        seen.add(name)
        frontier.extend(lock[name][1])
    return {name: list(lock[name][0]) for name in sorted(seen)}
