"""Is an asset partition missing, stale or fresh? Dagster's rule, read through its public APIs only.

The same rule the UI shows (Dagster's data-version staleness), from the instance's event records:
- missing: never materialized;
- stale: its recorded code version differs from the definition's, or one of the upstream partitions
  it read has since got a *different* data version (a re-materialization or re-observation that
  reproduces the same version does not count), or it has a dependency it did not read;
- damaged (not Dagster's rule, ours): its committed output lost or changed files since it was recorded
  (core/output_check.py: file list + sizes against the output's manifest);
- fresh otherwise. Like Dagster, a dependency on >= 100 upstream partitions is not compared
  partition by partition (it would cost a query per partition).
The asset graph comes from `Definitions.resolve_all_asset_specs()`, records from
`DagsterInstance.fetch_materializations / fetch_observations`, provenance from `DataProvenance.from_tags`.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

import dagster as dg

from marin_assets.core.output_check import output_damage

DATA_VERSION_TAG = "dagster/data_version"  # the data version Dagster records on every event
MANY_PARTITIONS = 100  # as Dagster's SKIP_PARTITION_DATA_VERSION_DEPENDENCY_THRESHOLD


@dataclass(frozen=True)
class Node:
    spec: dg.AssetSpec
    observable: bool
    materializable: bool


def asset_nodes(defs: dg.Definitions) -> dict[dg.AssetKey, Node]:
    observable = {a.key for a in defs.assets or [] if isinstance(a, dg.SourceAsset) and a.is_observable}
    materializable = {
        k for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition) and a.is_materializable for k in a.keys
    }
    return {s.key: Node(s, s.key in observable, s.key in materializable) for s in defs.resolve_all_asset_specs()}


def toposorted(nodes: dict[dg.AssetKey, Node]) -> list[dg.AssetKey]:
    """Upstream first; ties broken by name so the order is stable."""
    sorter = graphlib.TopologicalSorter({k: {d.asset_key for d in n.spec.deps} & nodes.keys() for k, n in nodes.items()})
    sorter.prepare()
    order: list[dg.AssetKey] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=lambda k: k.to_user_string())
        order.extend(ready)
        sorter.done(*ready)
    return order


class StaleStatus:
    """Statuses of one graph against one instance, each event query made once."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, nodes: dict | None = None):
        self.instance = instance
        self.nodes = nodes or asset_nodes(defs)

    def latest(self, key: dg.AssetKey, partition: str | None, *, after: int | None = None,
               before: int | None = None):
        """The newest record of this (asset, partition), optionally within storage ids (after, before)."""
        node = self.nodes.get(key)
        fetch = self.instance.fetch_observations if node and node.observable else self.instance.fetch_materializations
        records_filter = dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None,
                                               after_storage_id=after, before_storage_id=before)
        records = fetch(records_filter, limit=1).records
        return records[0] if records else None

    @staticmethod
    def data_version(record) -> str | None:
        if record is None:
            return None
        event = record.asset_materialization or record.asset_observation
        return (event.tags or {}).get(DATA_VERSION_TAG)

    def upstream_partitions(self, key: dg.AssetKey, partition: str | None, dep: dg.AssetDep) -> list[str | None]:
        upstream = self.nodes[dep.asset_key].spec.partitions_def
        if upstream is None:
            return [None]
        downstream = self.nodes[key].spec.partitions_def
        mapping = dep.partition_mapping or (dg.IdentityPartitionMapping() if downstream else dg.AllPartitionMapping())
        subset = downstream.subset_with_partition_keys([partition]) if downstream else None
        result = mapping.get_upstream_mapped_partitions_result_for_partitions(
            subset, downstream, upstream, dynamic_partitions_store=self.instance
        )
        return list(result.partitions_subset.get_partition_keys())

    def causes(self, key: dg.AssetKey, partition: str | None) -> list[str]:
        """Why this partition needs materializing ([] = fresh); "missing" if it never was."""
        node = self.nodes[key]
        record = self.latest(key, partition)
        if record is None:
            return ["missing"]
        provenance = dg.DataProvenance.from_tags(record.asset_materialization.tags or {})
        if provenance is None:
            return ["materialized without data provenance"]
        out = []
        if node.spec.code_version and node.spec.code_version != provenance.code_version:
            out.append("has a new code version")
        for dep in node.spec.deps:
            if dep.asset_key not in self.nodes:
                continue
            upstream = self.upstream_partitions(key, partition, dep)
            if len(upstream) >= MANY_PARTITIONS:
                continue
            if not provenance.has_input_asset(dep.asset_key):
                out.append(f"has a new dependency on {dep.asset_key.to_user_string()}")
                continue
            for up in upstream:
                if self._dep_updated(provenance, dep.asset_key, up):
                    label = dep.asset_key.to_user_string() + (f"[{up}]" if up else "")
                    out.append(f"{label} has a new data version")
        out.extend(self.damaged(record))
        return out

    @staticmethod
    def damaged(record) -> list[str]:
        """Why the recorded output needs rewriting: files missing or resized since it was committed."""
        uri = record.asset_materialization.metadata.get("output_uri")
        if uri is None:
            return []
        try:
            problems = output_damage(str(uri.value))
        except OSError as exc:
            problems = [f"{uri.value} is unreadable ({exc})"]
        return [f"has a damaged output: {p}" for p in problems]

    def _dep_updated(self, provenance: dg.DataProvenance, dep_key: dg.AssetKey, partition: str | None) -> bool:
        if partition is None:
            recorded = provenance.input_data_versions.get(dep_key)
            current = self.current_version(dep_key)
            # An asset read before it existed and still unmaterialized is unchanged (Dagster's special case).
            return recorded != current and not (recorded == INITIAL and current == NULL)
        cursor = provenance.input_storage_ids.get(dep_key)
        newer = self.latest(dep_key, partition, after=cursor)
        if newer is None:
            return False
        # No pointer (read before this partition was ever recorded, e.g. materialized by a plain CLI run
        # before its source was observed): stale once it exists. Dagster would never compare it again.
        read = self.latest(dep_key, partition, before=cursor + 1) if cursor is not None else None
        return self.data_version(read) != self.data_version(newer)

    def current_version(self, key: dg.AssetKey) -> dg.DataVersion:
        record = self.latest(key, None)
        if record is None:
            return INITIAL if self.nodes[key].observable or not self.nodes[key].materializable else NULL
        return dg.DataVersion(self.data_version(record) or INITIAL.value)


# Dagster's versions for "assumed to exist, never recorded" (sources) and "does not exist yet".
INITIAL = dg.DataVersion("INITIAL")
NULL = dg.DataVersion("NULL")
