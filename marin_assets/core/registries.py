"""One registry mechanism for every extension point: a name -> implementation table that finds its items.

A registry declared with `package=` imports, on its first lookup, every module of that package that
imports the module declaring the registry (a pkgutil walk; only such a module can register, and the
package's other helpers stay unloaded), so "a new filter / format / extractor / law form" is one new
module in the package that decorates its class with `REGISTRY.register(name)`: no import is added by
hand anywhere. A name taken
twice fails at import naming both modules; an unknown name fails naming the recipe file, the field and
the known names (`check`), or the caller's context (`lookup`).
The import graph (core.import_graph) applies the same rule to `package=`, so the discovered modules are
part of the code version of whatever uses the registry.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


def imports_module(name: str, target: str) -> bool:
    """Whether module `name`'s source imports `target` (read with ast, not imported): an extension module."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    with open(spec.origin, encoding="utf-8") as source:
        tree = ast.parse(source.read(), filename=spec.origin)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == target:
            return True
        if isinstance(node, ast.Import) and any(alias.name == target for alias in node.names):
            return True
    return False


class UnknownName(ValueError, KeyError):
    """An unknown name (a ValueError for recipes, a KeyError for dict-style callers)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(dict):
    """A dict of registered items; `kind` names them in errors ("extractor kind", "format")."""

    def __init__(self, kind: str, package: str | None = None):
        super().__init__()
        self.kind = kind
        self.package = package
        self._discovered = package is None
        # the module whose extension modules register here: the one this registry is declared in
        self.declared_in = inspect.currentframe().f_back.f_globals["__name__"]
        self._modules: dict[str, str] = {}  # name -> the module that defines the item

    def register(self, *names: str) -> Callable[[T], T]:
        """Decorator: the item is registered under every name given."""

        def add(item: T) -> T:
            module = getattr(item, "__module__", None) or type(item).__module__
            for name in names:
                if dict.__contains__(self, name):
                    raise ValueError(f"{self.kind} '{name}' is registered twice: by {self._modules[name]} "
                                     f"and by {module}")  # fmt: skip
                dict.__setitem__(self, name, item)
                self._modules[name] = module
            return item

        return add

    def discover(self) -> Registry:
        """Import every module of the package once (each registers its items on import)."""
        if self._discovered:
            return self
        self._discovered = True  # before importing: a module that looks this registry up must not recurse
        try:
            package = importlib.import_module(self.package)
            for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
                if info.name not in sys.modules and imports_module(info.name, self.declared_in):
                    importlib.import_module(info.name)
        except BaseException:
            self._discovered = False  # a broken module: fail again on the next lookup, not silently half-filled
            raise
        return self

    def modules(self) -> list[ModuleType]:
        """The modules that registered the items (part of a code version)."""
        self.discover()
        return [sys.modules[name] for name in dict.fromkeys(self._modules.values()) if name in sys.modules]

    def module_of(self, name: str) -> str:
        self.discover()
        return self._modules[name]

    def lookup(self, name: str, context: str = ""):
        self.discover()
        if not dict.__contains__(self, name):
            raise UnknownName(f"{context}unknown {self.kind} '{name}'; known: {', '.join(self.names())}")
        return dict.__getitem__(self, name)

    def check(self, name: str, recipe_file: str, field: str) -> str:
        """`name` if registered, else an error naming the recipe file, the field and the known names."""
        self.discover()
        if not dict.__contains__(self, name):
            raise UnknownName(f"{recipe_file}: {field}: unknown {self.kind} '{name}'; known: {', '.join(self.names())}")
        return name

    def names(self) -> list[str]:
        return sorted(map(str, self))

    # Reading the table discovers first, so no caller sees a half-filled registry.
    def __getitem__(self, name):
        return self.lookup(name)

    def __contains__(self, name) -> bool:
        return dict.__contains__(self.discover(), name)

    def __iter__(self) -> Iterator:
        return dict.__iter__(self.discover())

    def __len__(self) -> int:
        return dict.__len__(self.discover())

    def __delitem__(self, name) -> None:
        dict.__delitem__(self, name)
        self._modules.pop(name, None)

    def keys(self):
        return dict.keys(self.discover())

    def values(self):
        return dict.values(self.discover())

    def items(self):
        return dict.items(self.discover())

    def get(self, name, default=None):
        return dict.get(self.discover(), name, default)
