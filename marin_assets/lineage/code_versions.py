"""Asset code versions derived from the code itself: no list of modules to keep up to date.

The rule: an asset's code version = its recipe section + the source of every package module in
the static import closure (core.import_graph) of the module(s) that *compute* it: the pure
functions or the job the asset calls (e.g. `cleaned_output` for cleaned_documents), not the Dagster
wiring file that declares it. Those modules are read from the asset's compute function itself
(core.code_roots, applied by `versioned` over `@dg.asset`), so none is named twice. Wiring (decorators, metadata, descriptions, partitions) does not
change what an asset computes, and hashing it would make every edit of an assets file stale every
asset in it. A helper the wiring calls to compute the output therefore belongs in a pure module,
where it is versioned (the layering test keeps pure modules free of Dagster and of wiring).
Package data a module reads is code too: a file next to a covered module that the module names by a
string literal (e.g. `Path(__file__).with_name("rules.json")`) is hashed with it.
Third-party code is part of it too: the locked versions (uv.lock) of the packages the covered
modules import and of everything those depend on (core.locked_packages), so an upgrade stales
exactly the assets whose code uses the package.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from marin_assets.core import import_graph, locked_packages

from marin_assets.lineage import code_roots
from marin_assets.core.hashing import canonical_json, sha256_bytes


# version -> the modules it covers, filled as definitions load: what `marin versions` prints.
_COVERED: dict[str, tuple[str, ...]] = {}


def covered_modules(version: str) -> tuple[str, ...]:
    """The package modules a code version made by `code_version` covers (() if not one of ours)."""
    return _COVERED.get(version, ())


def _module_name(module: ModuleType | str) -> str:
    name = module if isinstance(module, str) else module.__name__
    if not name.startswith(import_graph.PACKAGE):
        raise ValueError(f"{name!r} is not a {import_graph.PACKAGE} module; third-party code is versioned by the lockfile")
    return name


def versioned_modules(*computing: ModuleType | str, package_dir: Path = import_graph.PACKAGE_DIR) -> list[str]:
    """The package modules a code version covers, sorted: the closure of the computing modules."""
    if not computing:
        raise ValueError("code_version needs the module(s) that compute the asset")
    return sorted(import_graph.closure([_module_name(m) for m in computing], package_dir))


_FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,120}\.[A-Za-z0-9]{1,10}")


@cache
def _named_data_files(module_file: Path) -> tuple[Path, ...]:
    """Non-Python files beside module_file whose names appear in it as string literals."""
    names = {node.value for node in ast.walk(ast.parse(module_file.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and _FILE_NAME.fullmatch(node.value)}
    found = []
    for name in sorted(names):
        candidate = module_file.parent / name
        if candidate.suffix != ".py" and candidate.is_file():
            found.append(candidate)
    return tuple(found)


def code_version(recipe_section: Any, *computing: ModuleType | str,
                 package_dir: Path = import_graph.PACKAGE_DIR, lock_file: Path = locked_packages.LOCK_FILE) -> str:
    """Hash of the recipe section and the source of every module in the computing modules' closure.

    Editing the recipe section, a computing module or anything it imports (at any depth, inside
    functions too) changes the version, so Dagster marks exactly the assets that run that code stale.
    """
    files = import_graph.graph_files(package_dir)  # the modules the closure below is taken from
    modules = versioned_modules(*computing, package_dir=package_dir)
    parts = [canonical_json(recipe_section)]
    for name in modules:
        parts.append(f"# {name}\n{files[name].read_text()}")
        for data in _named_data_files(files[name]):  # read each time: an edited data file changes the version
            parts.append(f"# {name} data {data.name}\n{sha256_bytes(data.read_bytes())}")
    imported = set().union(*(locked_packages.third_party_imports(files[n], import_graph.PACKAGE) for n in modules))
    parts.append(f"# packages\n{canonical_json(locked_packages.locked_versions(sorted(imported), lock_file))}")
    version = sha256_bytes("\n".join(parts).encode())[:16]
    _COVERED[version] = tuple(modules)
    return version


def versioned(recipe_section: Any):
    """Decorator over `@dg.asset`: the asset's code version from recipe_section and the modules its
    compute function calls (core.code_roots), so no module list sits beside the asset.

        @versioned(recipe.model_dump(mode="json"))
        @dg.asset(...)
        def cleaned_documents(...): ...
    """
    def apply(assets_def):
        compute = assets_def.op.compute_fn.decorated_fn
        roots = code_roots.compute_roots(compute)
        if not roots:
            raise ValueError(f"{compute.__qualname__} calls no {import_graph.PACKAGE} module outside Dagster "
                             "wiring: move what computes the asset into a pure module")
        version = code_version(recipe_section, *roots)
        return assets_def.map_asset_specs(lambda spec: spec.replace_attributes(code_version=version))

    return apply
