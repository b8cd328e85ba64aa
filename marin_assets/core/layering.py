"""The package's layers, read from the source, and the import rules between them.

Three kinds of module, decided from each file's own source (no list to keep):
- wiring: declares Dagster definitions (assets, checks, sensors, schedules, jobs, Definitions);
- dagster: uses Dagster but declares nothing (resources, launchers, output recording);
- pure: imports no Dagster (`dagster_pipes`, the training process's tiny client, is not Dagster).
`core` sits at the bottom; the stages are the packages in STAGES (pure code and Dagster-aware helpers),
each with its wiring in `defs/<stage>/`; `resources` is the Dagster layer every stage's wiring shares; the top (definitions, materialize_all, the `marin` CLI and its `cli_*`
subcommand modules) sits above everything. A package `__init__` has the kind of what it re-exports.

Rules (`violations` lists every break; the layering test asserts there is none):
1. core imports only core;
2. a pure module imports only pure modules;
3. a wiring module is imported only by modules of its own stage and by the top: no stage imports
   another stage's wiring (other stages' pure and Dagster-aware helpers, e.g. train.launchers, are fine);
4. nothing below the top imports it;
5. no import cycle, between modules or between stages;
6. Dagster definitions are declared only in `defs/` and the top, so the folders show where the graph is.
"""

from __future__ import annotations

import functools
from pathlib import Path

from marin_assets.core import import_graph
from marin_assets.core.import_graph import PACKAGE, PACKAGE_DIR

STAGES = ("data", "tokenize", "train", "scaling", "evaluation", "governance")
TOP = frozenset(f"{PACKAGE}.{m}" for m in ("definitions", "materialize_all", "stale_status", "cli", "versions", "stage_jobs", "stage_loading", "pool_slots"))
# Calls and decorators that declare a Dagster definition.
DECLARES = frozenset({
    "asset", "multi_asset", "graph_asset", "graph_multi_asset", "asset_check", "multi_asset_check",
    "observable_source_asset", "multi_observable_source_asset", "sensor", "asset_sensor", "multi_asset_sensor",
    "run_status_sensor", "run_failure_sensor", "schedule", "ScheduleDefinition", "define_asset_job", "job", "op",
    "Definitions", "SourceAsset",
})


def _is_dagster(module: str) -> bool:
    root = module.split(".")[0]
    return root == "dagster" or (root.startswith("dagster_") and root != "dagster_pipes")


@functools.cache
def module_kind(module: str, package_dir: Path = PACKAGE_DIR) -> str:
    imported, names = import_graph.module_names(module, package_dir)  # import_graph's walk: no second parse
    if not any(_is_dagster(m) for m in imported):
        return "pure"
    # a declaration is `dg.asset`/`dagster.asset` or a name imported from dagster (a local `job` variable is not)
    names = {name for module_name, name in names if _is_dagster(module_name)}
    return "wiring" if names & DECLARES else "dagster"


def is_top(module: str) -> bool:
    return module in TOP or module.rsplit(".", 1)[-1].startswith("cli_")


def kinds(package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    graph, files = import_graph.import_graph(package_dir), import_graph.graph_files(package_dir)
    kind = {m: module_kind(m, package_dir) for m in graph}
    for module in sorted(graph, key=lambda m: -m.count(".")):  # deepest packages first
        if files[module].name == "__init__.py" and kind[module] == "pure":
            if any(kind[d] != "pure" for d in graph[module]):
                kind[module] = "dagster"
    return kind


def stage_of(module: str) -> str | None:
    """A stage's pure code lives in `marin_assets.<stage>`, its wiring in `marin_assets.defs.<stage>`."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "defs":
        parts = parts[1:]
    return parts[1] if len(parts) > 1 and parts[1] in STAGES else None


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def violations(package_dir: Path = PACKAGE_DIR) -> list[str]:
    graph = import_graph.import_graph(package_dir)
    kind = kinds(package_dir)
    out = []
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if _layer(module) == "core" and _layer(dep) != "core":
                out.append(f"{module} (core) imports {dep}: core imports only core")
            if kind[module] == "pure" and kind[dep] != "pure" and not is_top(module):
                out.append(f"{module} (pure) imports {dep} ({kind[dep]}): pure modules import no Dagster")
            if kind[dep] == "wiring" and not is_top(module) and stage_of(module) != stage_of(dep):
                out.append(f"{module} imports {dep}, another stage's Dagster wiring")
            if is_top(dep) and not is_top(module):
                out.append(f"{module} imports {dep}, the orchestration layer on top")
        if kind[module] == "wiring" and not is_top(module) and _layer(module) != "defs":
            out.append(f"{module} declares Dagster definitions outside defs/")
    if cycle := import_graph.find_cycle(graph):
        out.append("import cycle: " + " -> ".join(cycle))
    stages = {s: frozenset() for s in STAGES}
    for module, deps in graph.items():
        if (s := stage_of(module)) is not None:
            stages[s] = stages[s] | {stage_of(d) for d in deps if stage_of(d) not in (None, s)}
    if cycle := import_graph.find_cycle(stages):
        out.append("stages import each other: " + " -> ".join(cycle))
    return out
