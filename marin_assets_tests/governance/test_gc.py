"""`marin gc` and its job: old staging/superseded folders go (listed), committed outputs and young
leftovers stay, and a superseded folder whose original is gone (an interrupted commit) is kept."""

import os
import time

import dagster as dg

from marin_assets.cli import main
from marin_assets.core.storage import Storage, staging_name, superseded_name
from marin_assets.defs.governance.gc_schedule import storage_gc_job, storage_gc_schedule
from marin_assets.resources.storage_resource import StorageResource

DAY = 24 * 3600


def age(path, seconds):
    old = time.time() - seconds
    for folder, _, files in os.walk(path):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
        os.utime(folder, (old, old))


def leftover_tree(tmp_path):
    storage = Storage(str(tmp_path))
    with storage.atomic_dir("cleaned", "web") as staged:  # a committed output, old
        open(staged.join("part-0.parquet"), "w").write("rows")
    age(tmp_path / "cleaned" / "web", 10 * DAY)
    crashed = staging_name(storage.uri("cleaned", "web"))  # a killed cleaning run's staging folder
    os.makedirs(crashed)
    open(os.path.join(crashed, "part-0.parquet"), "w").write("half")
    age(crashed, 5 * DAY)
    os.makedirs(tmp_path / "training" / "run-a" / "plan")
    retrained = superseded_name(storage.uri("training", "run-a"))  # a retrain's set-aside state
    os.makedirs(os.path.join(retrained, "checkpoints", "10"))
    open(os.path.join(retrained, "checkpoints", "10", "x"), "w").write("ckpt")
    age(retrained, 5 * DAY)
    young = staging_name(storage.uri("cleaned", "docs"))  # maybe a write in progress
    os.makedirs(young)
    orphan = superseded_name(storage.uri("tokenized", "gone"))  # its original is missing: the only copy
    os.makedirs(orphan)
    open(os.path.join(orphan, "shard"), "w").write("x")
    age(orphan, 5 * DAY)
    return storage, {"crashed": crashed, "retrained": retrained, "young": young, "orphan": orphan}


def test_marin_gc_removes_old_leftovers_lists_them_and_keeps_everything_else(tmp_path, capsys):
    storage, paths = leftover_tree(tmp_path)
    assert main(["gc", "--storage-root", str(tmp_path), "--retention-hours", "48", "--dry-run"]) == 0
    assert os.path.exists(paths["crashed"]) and "would remove 2 leftover" in capsys.readouterr().out
    assert main(["gc", "--storage-root", str(tmp_path), "--retention-hours", "48"]) == 0
    out = capsys.readouterr().out
    assert "removed staging" in out and paths["crashed"] in out and paths["retrained"] in out
    assert "removed 2 leftover folder(s)" in out
    assert not os.path.exists(paths["crashed"]) and not os.path.exists(paths["retrained"])
    for kept in ("young", "orphan"):
        assert os.path.exists(paths[kept]), kept
    assert storage.is_committed("cleaned", "web") and storage.list_files("cleaned", "web") == ["part-0.parquet"]
    assert os.path.isdir(tmp_path / "training" / "run-a" / "plan")


def test_the_gc_job_removes_the_same_and_its_schedule_is_off_by_default(tmp_path):
    _, paths = leftover_tree(tmp_path)
    result = storage_gc_job.execute_in_process(
        resources={"storage": StorageResource(root_uri=str(tmp_path))},
        run_config={"ops": {"remove_storage_leftovers": {"config": {"retention_hours": 48}}}},
    )
    assert result.success and result.output_for_node("remove_storage_leftovers") == 2
    assert not os.path.exists(paths["crashed"]) and os.path.exists(paths["young"])
    assert storage_gc_schedule.default_status == dg.DefaultScheduleStatus.STOPPED
