"""materialize_all and stale_status on a small real graph (real Dagster instance and runs, no Spark).

The graph has what the platform's has: a partitioned observable source, an identity-mapped
partitioned asset with a code version, an unpartitioned fan-in and a failing branch. Every status
stale_status gives is compared with Dagster's own resolver (internal API, used here only).
"""

import json
import re

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus as DagsterStatus
from dagster._core.loader import LoadingContextForTest

from marin_assets.materialize_all import materialize_all, observe_sources, plan
from marin_assets.stale_status import StaleStatus

PARTS = dg.StaticPartitionsDefinition(["a", "b"])


def build_defs(state: dict, code: str = "v1") -> dg.Definitions:
    """state["files"]: the source's content per partition; state["fail"]: make `broken` raise."""

    @dg.observable_source_asset(partitions_def=PARTS)
    def files(context):
        return dg.DataVersionsByPartition(dict(state["files"]))

    @dg.asset(partitions_def=PARTS, code_version=code,
              deps=[dg.AssetDep(files, partition_mapping=dg.IdentityPartitionMapping())])
    def cleaned(context) -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion(state["files"][context.partition_key].upper()))

    @dg.asset(code_version="v1", deps=[cleaned])
    def summary(context) -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion(json.dumps(sorted(state["files"].values()))))

    @dg.asset(code_version="v1", deps=[summary])
    def broken(context):
        if state.get("fail"):
            raise RuntimeError("broken on purpose")

    @dg.asset(code_version="v1", deps=[broken])
    def after_broken(context):
        pass

    return dg.Definitions(assets=[files, cleaned, summary, broken, after_broken])


def ran(out: str) -> list[str]:
    """What materialize_all's per-run lines ("[marin] ok     asset [partition]  1.2s  (n/m)") say ran."""
    runs = []
    for line in out.splitlines():
        match = re.match(r"\[marin\] (ok|FAILED) +(\S+( \[[^\]]+\])?) ", line)
        if match:
            runs.append(match.group(2))
    return runs


def planned(defs, instance) -> list[str]:
    return [r.describe() for r in plan(defs, instance)]


def assert_agrees_with_dagster(defs, instance):
    ours = StaleStatus(defs, instance)
    theirs = CachingStaleStatusResolver(instance, defs.resolve_asset_graph(), LoadingContextForTest(instance))
    for key in ("cleaned", "summary", "broken", "after_broken"):
        for pk in (["a", "b"] if key == "cleaned" else [None]):
            dagster_says = theirs.get_status(dg.AssetKey(key), pk) != DagsterStatus.FRESH
            assert bool(ours.causes(dg.AssetKey(key), pk)) == dagster_says, (key, pk, ours.causes(dg.AssetKey(key), pk))


@pytest.fixture(scope="module")
def built():
    """One graph built once by materialize_all; the tests below read it, the last one changes it."""
    state = {"files": {"a": "x1", "b": "y1"}}
    with dg.instance_for_test() as instance:
        defs = build_defs(state)
        assert materialize_all(defs, instance)
        yield defs, instance, state


def test_built_upstream_first_then_a_noop(built, capsys):
    defs, instance, _ = built
    assert planned(defs, instance) == []
    assert_agrees_with_dagster(defs, instance)
    assert materialize_all(defs, instance)
    assert "0 run(s) executed" in capsys.readouterr().out
    materialized = [r.asset_key.to_user_string() for r in
                    instance.fetch_materializations(dg.AssetRecordsFilter(dg.AssetKey("cleaned")), limit=5).records]
    assert len(materialized) == 2


def test_new_code_version_stales_that_asset_only(built):
    _, instance, state = built
    changed = build_defs(state, code="v2")
    assert planned(changed, instance) == ["cleaned [a]", "cleaned [b]"]
    assert_agrees_with_dagster(changed, instance)


def test_same_data_version_again_stales_nothing(built):
    defs, instance, _ = built
    observe_sources(defs, instance)  # a re-observation with the same versions
    assert planned(defs, instance) == []
    assert_agrees_with_dagster(defs, instance)


def test_changed_source_stales_exactly_its_partition_then_downstream(built, capsys):
    defs, instance, state = built
    state["files"]["b"] = "y2"
    observe_sources(defs, instance)
    assert planned(defs, instance) == ["cleaned [b]"]  # summary follows once cleaned[b] has a new version
    assert_agrees_with_dagster(defs, instance)
    assert materialize_all(defs, instance)
    out = capsys.readouterr().out
    assert ran(out) == ["cleaned [b]", "summary", "broken", "after_broken"]  # broken: summary's data version changed
    assert planned(defs, instance) == []


def test_failure_skips_its_downstream_reports_it_and_fails(capsys):
    state = {"files": {"a": "x1", "b": "y1"}, "fail": True}
    defs = build_defs(state)
    with dg.instance_for_test() as instance:
        assert materialize_all(defs, instance, only={"summary", "broken", "after_broken"}) is False
        out = capsys.readouterr().out
        assert "[marin] FAILED broken " in out and "skipping its downstream: after_broken" in out
        assert out.rstrip().splitlines()[-1].startswith("[marin] failed: broken")
        assert "after_broken" not in ran(out)
        state["fail"] = False
        assert planned(defs, instance)[-2:] == ["broken", "after_broken"]
