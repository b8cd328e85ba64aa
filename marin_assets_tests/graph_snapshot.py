"""A JSON description of the asset graph: keys, deps, groups, partitions, checks, automation."""

from __future__ import annotations

import dagster as dg


def _partitions(partitions_def) -> dict | None:
    if partitions_def is None:
        return None
    return {"type": type(partitions_def).__name__, "keys": sorted(partitions_def.get_partition_keys())}


def graph_snapshot(defs: dg.Definitions) -> dict:
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "partitions": _partitions(node.partitions_def),
            "materializable": node.is_materializable,
            "automation": str(node.automation_condition.get_label() or type(node.automation_condition).__name__)
            if node.automation_condition
            else None,
            "pool": node.pools and sorted(node.pools) or None,
        }
    checks = {}
    for check_key in sorted(graph.asset_check_keys, key=lambda c: c.to_user_string()):
        spec = graph.get_check_spec(check_key)
        checks[check_key.to_user_string()] = {"blocking": spec.blocking}
    return {
        "assets": assets,
        "checks": checks,
        "sensors": sorted(s.name for s in defs.sensors or []),
        "schedules": sorted(s.name for s in defs.schedules or []),
    }
