"""End to end, as a user runs it, against a persistent SQLite instance: `marin materialize-all`
builds the graph, `dg launch` (the README's command) re-runs every stage from the CLI (and must reproduce
each output byte for byte), then lineage (what goes stale) and a no-op re-run."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import dagster as dg
import pytest

from marin_assets_tests.e2e.workspace import GRAPH_KEYS, SOURCES, make_workspace, refresh_checksum

pytestmark = pytest.mark.slow


def output_hashes(storage_root: Path) -> dict[str, str]:
    """output_hash of every committed output, keyed by its path under the storage root."""
    hashes = {}
    for manifest in sorted(storage_root.rglob("_provenance.json")):
        rel = str(manifest.parent.relative_to(storage_root))
        if ".staging-" not in rel:
            hashes[rel] = json.loads(manifest.read_text())["output_hash"]
    return hashes


def ran(proc) -> list[str]:
    """The runs materialize-all reports, one line each: "[marin] ok     asset [partition]  12.3s  (n/m)"."""
    runs = []
    for line in proc.stdout.splitlines():
        match = re.match(r"\[marin\] (ok|FAILED) +(\S+( \[[^\]]+\])?) ", line)
        if match:
            runs.append(match.group(2))
    return runs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    ws = make_workspace(tmp_path_factory.mktemp("e2e"))
    started = time.monotonic()
    ws.first_runs = ran(ws.run("marin", "materialize-all", "--only", GRAPH_KEYS))
    ws.first_build_s = time.monotonic() - started
    ws.first_hashes = output_hashes(ws.storage_root)
    ws.materialize_stage_by_stage()  # recomputes one partition of every stage over the first build
    ws.cli_hashes = output_hashes(ws.storage_root)
    return ws


def test_materialize_all_builds_every_partition_of_the_graph(built):
    committed = {p.parent.relative_to(built.storage_root).as_posix() for p in built.storage_root.rglob("_COMMITTED")}
    for source in SOURCES:
        assert {f"raw/{source}", f"cleaned/{source}", f"tokenized/{source}"} <= committed
    assert any(c.startswith("tokenizer/") for c in committed)
    assert "mixtures/sample" in committed
    assert {"training/tiny-sample/plan", "training/tiny-sample/final"} <= committed
    # raw_corpus, cleaned_documents, data_report and tokenized_source per source; eval_set, quality_classifier,
    # task_set_decontamination, tokenizer, mixture, training_plan and training_run once each
    assert len(built.first_runs) == 4 * len(SOURCES) + 7, built.first_runs
    assert not list(built.storage_root.rglob("*.staging-*")), "a staging folder was left behind"


def test_every_stage_rematerialized_from_the_cli_reproduces_its_outputs(built):
    # Each CLI call really ran: the instance holds a second materialization of every stage's partition.
    with dg.DagsterInstance.from_config(str(built.root / "dagster_home")) as instance:
        for key, partition in (("cleaned_documents", "dirty_web"), ("tokenizer", None), ("mixture", "sample"),
                               ("training_run", "tiny-sample")):
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey(key), asset_partitions=[partition] if partition else None), limit=5)
            assert len(records.records) == 2, key
        # ... and records its output's content hash as the data version.
        tags = instance.get_latest_materialization_event(dg.AssetKey("tokenizer")).asset_materialization.tags
    assert tags["dagster/data_version"] == built.cli_hashes[next(k for k in built.cli_hashes if k.startswith("tokenizer/"))]
    # Deterministic: cleaning, the tokenizer, shards, the mixture and the checkpoint come out byte-identical.
    assert {k: built.cli_hashes.get(k) for k in built.first_hashes} == built.first_hashes
    assert any(k.startswith("training/tiny-sample.superseded-") for k in built.cli_hashes)  # really retrained


def test_noop_rerun_recomputes_nothing(built):
    # A CLI materialization of raw_corpus may not record the source observation it read; the first
    # pass re-anchors such partitions (same data version) and must not recompute anything downstream.
    anchoring = ran(built.run("marin", "materialize-all", "--only", GRAPH_KEYS))
    assert all(r.startswith("raw_corpus [") for r in anchoring), anchoring
    started = time.monotonic()
    proc = built.run("marin", "materialize-all", "--only", GRAPH_KEYS)
    noop_s = time.monotonic() - started
    print(f"\nfirst build (materialize-all): {built.first_build_s:.1f}s; no-op re-run: {noop_s:.1f}s")
    assert "[marin] 0 run(s) executed" in proc.stdout, proc.stdout
    assert output_hashes(built.storage_root) == built.cli_hashes


def test_changed_source_file_stales_exactly_its_partitions(built):
    path = next((built.data_dir / "debian_licenses").glob("*.jsonl"))
    doc = {"id": "e2e-new-doc", "text": "A new license text added by the lineage test. " * 30}
    with path.open("a") as f:
        f.write(json.dumps(doc) + "\n")
    refresh_checksum(built, "debian_licenses")

    plan = built.run("marin", "materialize-all", "--only", GRAPH_KEYS, "--plan").stdout
    planned = [line for line in plan.splitlines() if line.startswith("[marin] would materialize")]
    assert planned == ["[marin] would materialize raw_corpus [debian_licenses]"], plan

    runs = ran(built.run("marin", "materialize-all", "--only", GRAPH_KEYS))
    assert "raw_corpus [debian_licenses]" in runs and "cleaned_documents [debian_licenses]" in runs
    for other in set(SOURCES) - {"debian_licenses"}:
        assert f"raw_corpus [{other}]" not in runs and f"cleaned_documents [{other}]" not in runs, runs
    after = output_hashes(built.storage_root)
    for other in set(SOURCES) - {"debian_licenses"}:
        assert after[f"cleaned/{other}"] == built.first_hashes[f"cleaned/{other}"]
    assert after["cleaned/debian_licenses"] != built.first_hashes["cleaned/debian_licenses"]
