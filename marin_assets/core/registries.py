"""A name -> implementation table filled by a decorator in each implementing module.

The pattern behind "a new extractor / format is one new module": the module decorates its class or
function with `REGISTRY.register(name)`, and callers look it up by the recipe's name. A name taken
twice is an error at import, an unknown name a clear error at lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Registry(dict):
    """A dict of registered items; `kind` names them in errors ("extractor kind", "reader of format")."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def register(self, *names: str) -> Callable[[T], T]:
        """Decorator: the item is registered under every name given."""

        def add(item: T) -> T:
            for name in names:
                if name in self:
                    raise ValueError(f"{self.kind} '{name}' is registered twice")
                self[name] = item
            return item

        return add

    def lookup(self, name: str, context: str = ""):
        if name not in self:
            raise ValueError(f"{context}unknown {self.kind} '{name}'; known: {', '.join(sorted(map(str, self)))}")
        return self[name]
