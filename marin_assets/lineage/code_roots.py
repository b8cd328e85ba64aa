"""The root modules of an asset's code version, read from its compute function: the code it calls.

An asset's compute function names what computes its output: the functions, classes and modules it
loads by global name (or from its enclosing factory's closure), e.g. `dedup_peers` from
`data.clean_source_gate` or `cleaned_output.planned_job`. Their modules are the roots of its code
version (core.code_versions takes their static import closure), so no module list is written beside
the asset and none can fall behind what the function calls.
Which referenced modules count, by their layer (core.layering):
- pure modules: roots (what the output is computed with);
- a stage's Dagster modules (its wiring, e.g. the asset's own file, and helpers such as
  `train.launchers`): not versioned themselves (decorators, metadata and descriptions do not change
  outputs), but the functions they define that the compute function calls are read the same way,
  so what a helper calls counts (`launch` -> the trainer run folder -> the entry point it runs);
- the shared `resources` package (storage, recording, Spark sessions): how every output is stored
  and recorded, not what it computes; left out;
- recipe loaders (a function annotated to return a `Recipe`, e.g. `load_cleaning_recipe`): what they
  return is recipe data, which the asset's recipe section hashes; their module's closure (a recipe
  schema imports every filter's options, so every filter) would stale an asset that reads one field.
"""

from __future__ import annotations

import dis
import inspect
import typing
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType
from typing import Any

from marin_assets.core import import_graph, layering
from marin_assets.core.recipes import Recipe

# Dagster resources shared by every asset (storage, recording, Spark sessions): plumbing, not computation.
SHARED_PLUMBING = f"{import_graph.PACKAGE}.resources"
_LOADS_BY_NAME = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_LOADS_FROM_CLOSURE = frozenset({"LOAD_DEREF", "LOAD_CLOSURE"})
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    """The function's code and every code object nested in it (lambdas, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_objects(const)


def _closure_values(fn: FunctionType) -> dict[str, Any]:
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name the factory had not bound yet
            continue
    return values


def referenced_objects(fn: FunctionType) -> list[Any]:
    """The objects fn loads by global name or from its closure, and the attributes it reads from a
    module so loaded (`local_launcher.measure_profile`), in the order it first loads them."""
    closure, found, ids = _closure_values(fn), [], set()

    def add(obj: Any) -> None:
        if id(obj) not in ids:
            ids.add(id(obj))
            found.append(obj)

    for code in _code_objects(fn.__code__):
        loaded = None  # the module the previous instruction loaded
        for instruction in dis.get_instructions(code):
            name = instruction.argval
            if loaded is not None and instruction.opname in _ATTRIBUTE_LOADS and hasattr(loaded, name):
                add(getattr(loaded, name))
            loaded = None
            if instruction.opname in _LOADS_BY_NAME and name in fn.__globals__:
                loaded = fn.__globals__[name]
            elif instruction.opname in _LOADS_FROM_CLOSURE and name in closure:
                loaded = closure[name]
            else:
                continue
            add(loaded)
            loaded = loaded if inspect.ismodule(loaded) else None
    return found


def module_of(obj: Any) -> str:
    """The module that defines obj (a module is its own; an instance, its class's)."""
    if inspect.ismodule(obj):
        return obj.__name__
    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj):
        return obj.__module__ or ""
    return type(obj).__module__


def loads_a_recipe(obj: Any) -> bool:
    """True for a function annotated to return a Recipe model (a recipe loader)."""
    if not inspect.isfunction(obj):
        return False
    try:
        returned = typing.get_type_hints(obj).get("return")
    except (NameError, TypeError):  # an annotation that does not resolve: not a loader we can tell
        return False
    return inspect.isclass(returned) and issubclass(returned, Recipe)


def compute_roots(fn: Callable, package: str = import_graph.PACKAGE) -> list[str]:
    """The pure package modules fn's code reaches (through helpers of wiring modules), sorted."""
    roots: set[str] = set()
    visited: set[FunctionType] = set()
    pending = [fn]
    while pending:
        current = inspect.unwrap(pending.pop())
        if not isinstance(current, FunctionType) or current in visited:
            continue
        visited.add(current)
        for obj in referenced_objects(current):
            module = module_of(obj)
            if module != package and not module.startswith(package + "."):
                continue  # third-party code is versioned by the lockfile
            if loads_a_recipe(obj):
                continue  # recipe data: hashed as the asset's recipe section
            kind = layering.module_kind(module)
            if kind == "pure":
                roots.add(module)
            elif inspect.isfunction(obj) and not module.startswith(SHARED_PLUMBING):
                pending.append(obj)  # a stage's wiring or launch helper: what it calls counts
    return sorted(roots)
