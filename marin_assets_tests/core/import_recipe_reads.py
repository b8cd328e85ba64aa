"""Which modules read a recipe while they are imported: run as `python -m marin_assets_tests.core.import_recipe_reads`.

Imports every module of the package (then any module named on the command line) with an audit hook
(sys.addaudithook, the stdlib's public way to watch file access) that records each file opened under
the recipes folders (the shipped one and $MARIN_RECIPES_DIR) and each listing of $MARIN_RECIPES_DIR's
folders (a registry read as a folder's entries, e.g. recipes/mixtures/). A read is charged to the
innermost package module whose top level was running. Prints {module: [paths read]} as JSON.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from pathlib import Path

from marin_assets.core.import_graph import module_files
from marin_assets.core.recipes import PACKAGE_RECIPES, recipes_dir

# The code location: Dagster needs its Definitions object at module scope, so importing it *is* loading
# the stages (each stage's recipes are read by its StageDefinitions then).
LOADS_AT_IMPORT = frozenset({"marin_assets.definitions"})
WATCHED_EVENTS = {"open": False, "os.listdir": True, "os.scandir": True, "glob.glob": True}  # event: a listing?


def _importing_module() -> str | None:
    """The innermost package (or extra) module whose top-level code is on the stack."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "<module>" and name in WATCHED_MODULES:
            return name
        frame = frame.f_back
    return None


def _recipe_path(raw) -> str | None:
    """The path of a watched event's target when it lies under a recipes folder, else None."""
    if not isinstance(raw, str | bytes | os.PathLike):
        return None  # an open() of a file descriptor
    return os.path.abspath(os.fsdecode(raw))


WATCHED_MODULES: set[str] = set()
READS: dict[str, list[str]] = {}


def main(extra: list[str]) -> dict[str, list[str]]:
    shipped, current = str(Path(PACKAGE_RECIPES).resolve()), str(recipes_dir().resolve())
    roots = {shipped: False, **({current: True} if current != shipped else {})}

    def hook(event: str, args: tuple) -> None:
        listing = WATCHED_EVENTS.get(event)
        if listing is None or not args:
            return
        path = _recipe_path(args[0])
        if path is None:
            return
        for root, lists_count in roots.items():
            # a listing of the shipped folder is the package's own source walk (import_graph); not a read
            if (path == root or path.startswith(root + os.sep)) and (not listing or lists_count):
                READS.setdefault(_importing_module() or "?", []).append(path)
                return

    modules = [m for m in sorted(module_files()) if m not in LOADS_AT_IMPORT] + extra
    WATCHED_MODULES.update(modules)
    sys.addaudithook(hook)
    for module in modules:
        importlib.import_module(module)
    return {module: sorted(set(paths)) for module, paths in READS.items()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), sort_keys=True))
