"""Cleaning and tokenization on a standalone cluster write the same bytes as on local[2].

Each stage runs through the Dagster CLI, as a user would, once with the local master and once
with MARIN_SPARK_MASTER pointing at the cluster; the executors there are other JVMs with their
own Python workers, so nothing can lean on state shared with the driver.
"""

from __future__ import annotations

import pytest

from marin_assets.core import layout
from marin_assets.core.hashing import sha256_bytes
from marin_assets_tests.e2e.workspace import make_workspace
from marin_assets_tests.recipe_edits import without_trained_curation

pytestmark = pytest.mark.slow
SOURCE = "dirty_web"


def _data_files(ws, stage: str) -> dict[str, str]:
    """sha256 of every data file of a stage's output (not the provenance manifest: it names the run)."""
    base = ws.storage_root / stage / SOURCE
    return {p.relative_to(base).as_posix(): sha256_bytes(p.read_bytes())
            for p in sorted(base.rglob("*")) if p.is_file() and (p.suffix == ".parquet" or p.name == "stats.json")}


def test_cleaning_and_tokenization_on_the_cluster_equal_local(spark_cluster, tmp_path, monkeypatch):
    ws = make_workspace(tmp_path / "ws")
    recipe = ws.recipes_dir / "tokenizer.yaml"  # train the tokenizer on the one cleaned source
    recipe.write_text(recipe.read_text().replace("sources: null", f"sources: [{SOURCE}]"))
    without_trained_curation(ws.recipes_dir / "cleaning.yaml")  # about the cluster, not curation
    monkeypatch.setenv("MARIN_SPARK_MASTER", "local[2]")
    ws.materialize("raw_corpus,cleaned_documents", SOURCE)
    ws.materialize("tokenizer", None)
    ws.materialize("tokenized_source", SOURCE)
    local = {stage: _data_files(ws, stage) for stage in (layout.CLEANED, layout.TOKENIZED)}
    assert any(name.startswith("documents/part-") for name in local[layout.CLEANED])
    assert any(name.startswith("shard-") for name in local[layout.TOKENIZED])

    monkeypatch.setenv("MARIN_SPARK_MASTER", spark_cluster.master_url)
    ws.materialize("cleaned_documents,tokenized_source", SOURCE)
    assert {stage: _data_files(ws, stage) for stage in local} == local

    # The run's Spark session was an application of the cluster, with executors in both workers' JVMs.
    status = spark_cluster.status()
    apps = status["completedapps"] + status["activeapps"]  # an exited driver's app may still be closing
    assert [app["name"] for app in apps] == ["marin_assets"]
    executor_dirs = [d for d in spark_cluster.state_dir.glob("work-*/app-*/*") if d.is_dir()]
    assert {d.parents[1].name for d in executor_dirs} == {"work-0", "work-1"}
