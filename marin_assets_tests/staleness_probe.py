"""Run by test_staleness.py in a fresh interpreter: which assets go stale after each edit of a package copy?

    python -P staleness_probe.py COPY_DIR EDITS_JSON OUT_JSON   (-P: its folder holds a `tokenize` package)

COPY_DIR holds a copy of `marin_assets` (first on sys.path). Against one ephemeral instance:
1. load the copy's definitions, observe its sources, and record one materialization of every asset
   partition with the provenance Dagster writes (code version, input data versions and pointers);
   Dagster's resolver must then call the whole graph fresh, else the recording is incomplete;
2. for each edit (a file and a function in it, or a recipe text replacement), apply it, reload the
   package, and write the stale (asset, partition) pairs by Dagster's resolver and by stale_status;
   then revert. Nothing is computed: staleness depends only on versions, which is what is tested.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # an edit reverted within one second must not reuse a stale .pyc


def load(copy: Path):
    for name in [m for m in sys.modules if m == "marin_assets" or m.startswith("marin_assets.")]:
        del sys.modules[name]
    import marin_assets.definitions as definitions

    assert Path(definitions.__file__).is_relative_to(copy), definitions.__file__
    return definitions.defs


def edit_function(path: Path, function: str) -> None:
    """Change one function: append a statement to its body (what any real edit amounts to)."""
    text = path.read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name == function)
    last = node.body[-1]
    lines = text.splitlines(keepends=True)
    lines.insert(last.end_lineno, " " * last.col_offset + "pass  # edited by the staleness test\n")
    path.write_text("".join(lines))


def statuses(defs, instance) -> tuple[list[str], list[str]]:
    import dagster as dg
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus as DagsterStatus
    from dagster._core.loader import LoadingContextForTest

    from marin_assets.stale_status import StaleStatus, asset_nodes

    nodes = asset_nodes(defs)
    resolver = CachingStaleStatusResolver(instance, defs.resolve_asset_graph(), LoadingContextForTest(instance))
    ours = StaleStatus(defs, instance, nodes)
    dagster_stale, our_stale = [], []
    for key, node in sorted(nodes.items()):
        if not node.materializable:
            continue
        pdef = node.spec.partitions_def
        for pk in pdef.get_partition_keys() if pdef else [None]:
            label = key.to_user_string() + (f"[{pk}]" if pk else "")
            if resolver.get_status(dg.AssetKey(key.path), pk) != DagsterStatus.FRESH:
                dagster_stale.append(label)
            if ours.causes(key, pk):
                our_stale.append(label)
    return dagster_stale, our_stale


def record_baseline(defs, instance) -> None:
    """One materialization per asset partition, upstream first, with the provenance tags Dagster writes."""
    import dagster as dg

    from marin_assets.stale_status import StaleStatus, asset_nodes, toposorted

    nodes = asset_nodes(defs)
    status = StaleStatus(defs, instance, nodes)
    for key in toposorted(nodes):
        node = nodes[key]
        if not node.materializable:
            continue
        pdef = node.spec.partitions_def
        for pk in pdef.get_partition_keys() if pdef else [None]:
            tags = {"dagster/code_version": node.spec.code_version or "unversioned",
                    "dagster/data_version": f"{key.to_user_string()}-{pk}"}
            for dep in node.spec.deps:
                ups = [status.latest(dep.asset_key, up) for up in status.upstream_partitions(key, pk, dep)]
                ups = [r for r in ups if r is not None]
                latest = max(ups, key=lambda r: r.storage_id) if ups else None
                name = dep.asset_key.to_user_string()
                tags[f"dagster/input_data_version/{name}"] = (status.data_version(latest) or "INITIAL") if latest else "NULL"
                tags[f"dagster/input_event_pointer/{name}"] = str(latest.storage_id) if latest else "NULL"
            instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=pk, tags=tags))


def _observe(defs, instance) -> None:
    from marin_assets.materialize_all import observe_sources  # the copy's, as loaded last

    observe_sources(defs, instance)


def main(copy: Path, edits: list[dict], out: Path) -> None:
    import dagster as dg

    sys.path.insert(0, str(copy))
    results = {}
    with dg.DagsterInstance.ephemeral() as instance:
        defs = load(copy)
        _observe(defs, instance)
        record_baseline(defs, instance)
        results["baseline"] = statuses(defs, instance)
        for edit in edits:
            path = copy / edit["file"]
            original = path.read_text()
            try:
                if "function" in edit:
                    edit_function(path, edit["function"])
                else:
                    assert edit["old"] in original, edit
                    path.write_text(original.replace(edit["old"], edit["new"], 1))
                changed = load(copy)
                if "function" not in edit:  # a recipe: its entries reach Dagster as observed data versions
                    _observe(changed, instance)
                results[edit["id"]] = statuses(changed, instance)
            finally:
                path.write_text(original)
            if "function" not in edit:
                _observe(load(copy), instance)
    out.write_text(json.dumps(results))


if __name__ == "__main__":
    main(Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3]))
