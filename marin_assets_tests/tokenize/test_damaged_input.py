"""A committed cleaned_documents output that lost or changed files is refused by its consumers (the
tokenizer, tokenized_source) naming what is missing, and `materialize-all --plan` reruns a damaged output."""

import os
import shutil

import dagster as dg
import pytest

from marin_assets.core import layout
from marin_assets.core.output_check import DamagedOutput, inventory, verify_committed
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.materialize_all import plan
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.tokenize.tokenize_job import cleaned_document_files
from marin_assets_tests.tokenize.conftest import SOURCES, materialize, synthetic_texts, write_cleaned_source


def write_recorded_source(storage: Storage, source: str, documents: int = 60) -> str:
    """A cleaned source committed with the manifest inventory record_output writes."""
    write_cleaned_source(storage, source, synthetic_texts(source, documents))
    base = storage.uri(layout.CLEANED, source)
    storage.write_json_atomic({"output_hash": storage.content_hash(layout.CLEANED, source),
                               "content": inventory(base, storage.content_hash(layout.CLEANED, source))},
                              layout.CLEANED, source, MANIFEST_NAME)
    return base


def step_failure(result) -> str:
    return next(e for e in result.all_events if e.is_step_failure).step_failure_data.error.to_string()


def test_deleted_documents_folder_is_refused_naming_the_files(tmp_path):
    storage = Storage(str(tmp_path))
    base = write_recorded_source(storage, "python_docs")
    assert len(cleaned_document_files(storage, "python_docs")) == 2  # intact: read as before
    shutil.rmtree(f"{base}/documents")
    with pytest.raises(DamagedOutput) as err:
        cleaned_document_files(storage, "python_docs")
    message = str(err.value)
    assert base in message and "2 file(s) missing" in message
    assert "documents/part-00000.parquet" in message and "documents/part-00001.parquet" in message


def test_truncated_and_rewritten_files_are_refused(tmp_path):
    storage = Storage(str(tmp_path))
    base = write_recorded_source(storage, "python_docs")
    part = f"{base}/documents/part-00001.parquet"
    with open(part, "r+b") as f:
        f.truncate(100)
    with pytest.raises(DamagedOutput, match=r"changed size: documents/part-00001.parquet \(\d+ -> 100 bytes\)"):
        verify_committed(storage, layout.CLEANED, "python_docs")
    # same size, other bytes: only the content hash tells (small outputs are hashed in full)
    base = write_recorded_source(storage, "dirty_web")
    part = f"{base}/documents/part-00000.parquet"
    data = bytearray(open(part, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(part, "wb").write(bytes(data))
    with pytest.raises(DamagedOutput, match="contents differ"):
        verify_committed(storage, layout.CLEANED, "dirty_web")
    assert verify_committed(storage, layout.CLEANED, "dirty_web", full_hash=False)  # list + sizes only


def test_tokenizer_and_tokenized_source_refuse_a_damaged_cleaned_output(tmp_path):
    from marin_assets_tests.stage_definitions import tokenized_source, tokenizer

    root = str(tmp_path)
    storage = Storage(root)
    bases = {source: write_recorded_source(storage, source) for source in SOURCES}
    shutil.rmtree(f"{bases['debian_licenses']}/documents")
    result = materialize([tokenizer], root, raise_on_error=False)
    assert not result.success
    failure = step_failure(result)
    assert "is damaged since it was committed" in failure and "documents/part-00000.parquet" in failure
    assert not list(tmp_path.glob("tokenizer/**/_COMMITTED"))  # nothing committed downstream

    write_recorded_source(storage, "debian_licenses")  # rewritten: the tokenizer trains; then damage another
    assert materialize([tokenizer], root).success
    os.remove(f"{bases['python_docs']}/documents/part-00001.parquet")
    result = materialize([tokenized_source], root, partition_key="python_docs", raise_on_error=False)
    failure = step_failure(result)
    assert "1 file(s) missing: documents/part-00001.parquet" in failure
    assert not list(tmp_path.glob("tokenized/**/_COMMITTED"))


def test_plan_reruns_a_damaged_output(tmp_path):
    from marin_assets_tests.stage_definitions import tokenizer

    root = str(tmp_path)
    storage = Storage(root)
    for source in SOURCES:
        write_recorded_source(storage, source)
    defs = dg.Definitions(assets=[tokenizer], resources={"storage": StorageResource(root_uri=root)})
    with dg.DagsterInstance.ephemeral() as instance:
        assert dg.materialize([tokenizer], instance=instance, resources={"storage": StorageResource(root_uri=root)}).success
        assert plan(defs, instance) == []  # fresh and intact
        (folder,) = [f"{storage.uri(layout.TOKENIZER)}/{name}" for name in os.listdir(storage.uri(layout.TOKENIZER))]
        victim = next(name for name in sorted(os.listdir(folder)) if not name.startswith("_"))
        os.remove(f"{folder}/{victim}")
        (run,) = plan(defs, instance)
        assert run.asset_keys == (dg.AssetKey("tokenizer"),)
        assert run.causes == (f"has a damaged output: 1 file(s) missing: {victim}",)
