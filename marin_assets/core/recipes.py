"""Recipes are YAML files a researcher edits; each is validated by a pydantic model on load.

A bad recipe fails with a message naming the file and the field, never a bare traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

T = TypeVar("T", bound=BaseModel)

PACKAGE_RECIPES = Path(__file__).resolve().parent.parent / "recipes"


class RecipeError(ValueError):
    pass


class Recipe(BaseModel):
    """Base for recipe models: unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NamedRegistry(Recipe):
    """A recipe that lists named entries (sources, eval sets): names are unique and looked up by name.

    Subclasses name the list field (`entries_field`) and what an entry is called in messages (`kind`).
    """

    entries_field: ClassVar[str]
    kind: ClassVar[str]

    def entries(self) -> list[Any]:
        return getattr(self, self.entries_field)

    @model_validator(mode="after")
    def _unique_names(self):
        names = [e.name for e in self.entries()]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate {self.kind} names: {dupes}")
        return self

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries()]

    def get(self, name: str):
        for entry in self.entries():
            if entry.name == name:
                return entry
        raise KeyError(f"unknown {self.kind} {name!r}; known: {self.names}")


def recipes_dir() -> Path:
    """Where recipes are read from: $MARIN_RECIPES_DIR, else the ones shipped in the package."""
    return Path(os.environ.get("MARIN_RECIPES_DIR", PACKAGE_RECIPES))


def recipe_path(path: str | Path) -> Path:
    """A registry's or table's path: absolute as given, else under recipes_dir() (its relative paths resolve there)."""
    path = Path(path)
    return path if path.is_absolute() else recipes_dir() / path


def load_recipe(path: str | Path, model: type[T]) -> T:
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = recipes_dir() / path
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise RecipeError(f"recipe file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not valid YAML: {exc}") from None
    try:
        return model.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        problems = "; ".join(
            f"field '{'.'.join(str(p) for p in err['loc']) or '<root>'}': {err['msg']}" for err in exc.errors()
        )
        raise RecipeError(f"{path}: invalid {model.__name__} recipe: {problems}") from None
