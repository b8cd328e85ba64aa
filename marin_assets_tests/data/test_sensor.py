"""The source files sensor requests raw_corpus only for sources whose files appeared or changed since
they were last seen or ingested, through the data stage job with the stage tags."""

from __future__ import annotations

import os

import dagster as dg
import fsspec

from marin_assets.defs.data.definitions import data_assets_and_checks
from marin_assets.defs.data.raw_assets import RAW_KEY, build_source_files_sensor
from marin_assets.data.sources.watch import changed_sources
from marin_assets.stage_jobs import ASSET_TAG, PARTITION_TAG, STAGE_JOB_TAG, job_name_for
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401 (fixture)


DATA_ASSETS = data_assets_and_checks()[0]
RAW_CORPUS = next(a for a in DATA_ASSETS if isinstance(a, dg.AssetsDefinition) and RAW_KEY in a.keys)
JOB = job_name_for(DATA_ASSETS, RAW_KEY)
source_files_sensor = build_source_files_sensor(JOB)


def tick(cursor: str | None, instance: dg.DagsterInstance | None = None) -> tuple[list[str], str | None, str | None]:
    """Evaluate the sensor once: (requested partitions, skip message, new cursor)."""
    context = dg.build_sensor_context(cursor=cursor, instance=instance or dg.DagsterInstance.ephemeral())
    result = source_files_sensor(context)
    if isinstance(result, dg.SkipReason):
        return [], result.skip_message, context.cursor
    return sorted(r.partition_key for r in result), None, context.cursor


def test_only_sources_whose_files_change_are_requested(tmp_path, write_registry):
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
    (tmp_path / "one" / "a.jsonl").write_text('{"text": "one"}\n')
    (tmp_path / "two" / "a.jsonl").write_text('{"text": "two"}\n')
    write_registry(
        [
            source_entry("dirty_web", str(tmp_path / "one")),
            source_entry("debian_licenses", str(tmp_path / "two" / "*.jsonl")),
            source_entry("python_docs", str(tmp_path / "three"), fmt="warc.gz"),  # no files yet
        ]
    )
    requested, _, cursor = tick(None)
    assert requested == ["debian_licenses", "dirty_web"]  # first sight of every source with files

    requested, skip, cursor = tick(cursor)
    assert requested == [] and skip == "no source files changed since they were last ingested"

    (tmp_path / "two" / "a.jsonl").write_text('{"text": "two, longer now"}\n')  # size changes
    requested, _, cursor = tick(cursor)
    assert requested == ["debian_licenses"]

    path = tmp_path / "one" / "a.jsonl"
    path.write_text('{"text": "ONE"}\n')  # same size: only the modification time tells
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    requested, _, cursor = tick(cursor)
    assert requested == ["dirty_web"]

    (tmp_path / "three" / "x.warc.gz").write_bytes(b"new file")
    (tmp_path / "one" / "notes.txt").write_text("not a source file")  # not .jsonl: not watched
    requested, _, cursor = tick(cursor)
    assert requested == ["python_docs"]


def test_run_requests_are_keyed_by_fingerprint(tmp_path, write_registry):
    (tmp_path / "a.jsonl").write_text('{"text": "one"}\n')
    write_registry([source_entry("dirty_web", str(tmp_path / "a.jsonl"))])
    context = dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral())
    [request] = source_files_sensor(context)
    assert request.partition_key == "dirty_web" and request.run_key.startswith("dirty_web:")
    # through the stage job, named as materialize-all names its runs (the runs list and timeline show it)
    assert source_files_sensor.job_name == JOB == "data_cleaned_documents_job"
    assert request.asset_selection == [RAW_KEY, dg.AssetKey("cleaned_documents")]
    assert request.tags == {ASSET_TAG: "cleaned_documents", PARTITION_TAG: "dirty_web", STAGE_JOB_TAG: JOB}


def test_first_tick_after_an_ingest_requests_nothing(tmp_path, write_registry):
    """A fresh cursor (a new `dagster dev` after the quickstart) does not re-ingest what raw_corpus ingested."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "a.jsonl").write_text('{"text": "one"}\n')
    (tmp_path / "two" / "a.jsonl").write_text('{"text": "two"}\n')
    write_registry([source_entry("dirty_web", str(tmp_path / "one")),
                    source_entry("debian_licenses", str(tmp_path / "two"))])
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([RAW_CORPUS], partition_key="dirty_web", instance=instance,
                            resources={"storage": StorageResource(root_uri=str(tmp_path / "store"))})
    assert result.success
    requested, _, cursor = tick(None, instance)
    assert requested == ["debian_licenses"]  # never ingested: requested; dirty_web was, and has not changed

    (tmp_path / "one" / "a.jsonl").write_text('{"text": "one, changed after the ingest"}\n')
    assert tick(None, instance)[0] == ["debian_licenses", "dirty_web"]  # a change since the ingest still counts


def test_gcs_prefix_is_watched_through_the_same_code(gcs_emulator, write_registry):
    root = gcs_emulator.root()
    fs, _ = fsspec.core.url_to_fs(root)
    with fs.open(f"{root}/docs/a.jsonl", "wb") as f:
        f.write(b'{"text": "in the bucket"}\n')
    write_registry([source_entry("dirty_web", f"{root}/docs/*.jsonl")], extra_roots=(root,))
    requested, _, cursor = tick(None)
    assert requested == ["dirty_web"]
    assert tick(cursor)[0] == []
    with fs.open(f"{root}/docs/b.jsonl", "wb") as f:
        f.write(b'{"text": "another object"}\n')
    fs.invalidate_cache()
    requested, _, cursor = tick(cursor)
    assert requested == ["dirty_web"]


def test_changed_sources_rules():
    assert changed_sources({}, {"a": "h1", "b": None}) == ["a"]  # b never had files
    assert changed_sources({"a": "h1"}, {"a": "h1"}) == []
    assert changed_sources({"a": "h1"}, {"a": None}) == ["a"]  # its files disappeared
    assert changed_sources({"a": "h1", "b": "h2"}, {"a": "h1", "b": "h3"}) == ["b"]


def test_with_global_dedup_a_changed_source_restales_every_partition(tmp_path, write_registry):
    """scope global: one source changes, every other source's cleaned table is requested too (its dedup
    reads all sources); scope source: only the changed one."""
    import yaml

    from marin_assets.core.recipes import PACKAGE_RECIPES

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.jsonl").write_text(f'{{"text": "{name}"}}\n')
    registry = write_registry([source_entry("dirty_web", str(tmp_path / "one")),
                               source_entry("debian_licenses", str(tmp_path / "two"))])
    cleaning = yaml.safe_load((PACKAGE_RECIPES / "cleaning.yaml").read_text())
    cleaning["dedup"]["scope"] = "global"
    (registry / "cleaning.yaml").write_text(yaml.safe_dump(cleaning, sort_keys=False))
    _, _, cursor = tick(None)

    (tmp_path / "two" / "a.jsonl").write_text('{"text": "two, changed"}\n')
    result = source_files_sensor(context := dg.build_sensor_context(cursor=cursor))
    by_partition = {r.partition_key: r.asset_selection for r in result}
    assert sorted(by_partition) == ["debian_licenses", "dirty_web"]
    assert by_partition["debian_licenses"] == [RAW_KEY, dg.AssetKey("cleaned_documents")]  # the changed source
    assert by_partition["dirty_web"] == [dg.AssetKey("cleaned_documents")]

    cleaning["dedup"]["scope"] = "source"
    (registry / "cleaning.yaml").write_text(yaml.safe_dump(cleaning, sort_keys=False))
    (tmp_path / "two" / "a.jsonl").write_text('{"text": "two, changed again"}\n')
    requested, _, _ = tick(context.cursor)
    assert requested == ["debian_licenses"]
