"""Uses of another package's private internals, read from the source: allowed only in `marin_assets/fastpath/`.

A private name (`_x`, not a dunder) of the standard library or a dependency can change in any release
without notice. The project keeps every such use in one place, each with a tripwire test
(marin_assets_tests/fastpath/test_tripwires.py). `violations` lists, as `file:line: what`, every use
elsewhere; the test in marin_assets_tests/core/test_private_uses.py asserts there is none. It finds:
- importing a private module or name: `from re import _parser`, `import _sha1`, `from x import _y`;
- a private attribute of an imported module: `argparse._SubParsersAction`, `gcloud_stub._stub`,
  also through getattr/setattr/hasattr with a literal name;
- a private attribute the project never defines, on any object (`spark._jvm`, `identifier._norm_probs`):
  a private name nobody here defines belongs to someone else's object;
- a monkey-patch: assigning an attribute of an imported module (`checkpointing.save = wrapper`);
- an experimental module (`jax.experimental.serialize_executable`): no stability promise either.
"""

from __future__ import annotations

import ast
from pathlib import Path

from marin_assets.core.import_graph import PACKAGE, PACKAGE_DIR

FAST_PATH = "fastpath"  # the one folder (under the package) where these uses live
# Underscore names that are documented public API: os._exit (the os docs), namedtuple's methods.
PUBLIC_UNDERSCORE = frozenset({"_exit", "_replace", "_asdict", "_fields", "_make", "_field_defaults"})
ATTR_CALLS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
REBINDABLE = frozenset({"sys.stdout", "sys.stderr", "sys.stdin"})  # meant to be replaced (the sys docs)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORE


def _external(module: str) -> bool:
    return module.split(".")[0] != PACKAGE


def _unstable(module: str) -> bool:
    parts = module.split(".")
    return any(map(is_private, parts)) or "experimental" in parts


def _imported_modules(tree: ast.AST) -> dict[str, str]:
    """Local name -> external module (or module.name) it is bound to, from every import in the file."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _external(alias.name):
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _external(node.module):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def defined_private_names(files: list[Path]) -> frozenset[str]:
    """Private names the project itself defines: functions, classes, module names and attributes it assigns."""
    names = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)  # __slots__ entries, setattr(self, "_x", ...)
        names.add(path.stem)
    return frozenset(n for n in names if is_private(n))


def _base_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def file_uses(path: Path, own: frozenset[str]) -> list[tuple[int, str]]:
    """(line, what) for each use of a private internal in one file; `own`: the project's private names."""
    tree = ast.parse(path.read_text())
    modules = _imported_modules(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"imports {a.name}") for a in node.names
                      if _external(a.name) and _unstable(a.name)]  # fmt: skip
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _external(node.module):
            if _unstable(node.module):
                found.append((node.lineno, f"imports from {node.module}"))
            found += [(node.lineno, f"imports {node.module}.{a.name}") for a in node.names
                      if is_private(a.name) or a.name == "experimental"]  # fmt: skip
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            base = _base_name(node.value)
            if base in modules or node.attr not in own:
                found.append((node.lineno, f"uses {ast.unparse(node)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTR_CALLS:
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and is_private(name.value):
                if _base_name(node.args[0]) in modules or name.value not in own:
                    found.append((node.lineno, f"uses {ast.unparse(node)}"))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and _base_name(target) in modules \
                        and ast.unparse(target) not in REBINDABLE:
                    found.append((node.lineno, f"monkey-patches {ast.unparse(target)}"))
    return sorted(set(found))


def violations(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """`path:line: what` for every private-internals use outside the fast-path folder."""
    files = sorted(package_dir.rglob("*.py"))
    own = defined_private_names(files)
    out = []
    for path in files:
        relative = path.relative_to(package_dir)
        if relative.parts[0] == FAST_PATH:
            continue
        out += [f"{package_dir.name}/{relative}:{line}: {what}" for line, what in file_uses(path, own)]
    return out
