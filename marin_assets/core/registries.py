"""One registry mechanism for every extension point: a name -> implementation table that finds its items.

A registry declared with `package=` imports every module of that package on its first lookup (a
pkgutil walk), so "a new filter / format / extractor / law form" is one new module in the package that
decorates its class with `REGISTRY.register(name)`: no import is added by hand anywhere. A name taken
twice fails at import naming both modules; an unknown name fails naming the recipe file, the field and
the known names (`check`), or the caller's context (`lookup`).
The import graph (core.import_graph) reads `package=` too, so the discovered modules are part of the
code version of whatever uses the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


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
