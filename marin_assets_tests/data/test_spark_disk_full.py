"""A disk that fills inside a Spark worker's write names the file being written (not just "Errno 28").

A small tmpfs is the output folder; the executor-side Parquet writer (write_parquet's mapInArrow task)
fills it. Skipped where mounting a tmpfs is not permitted (needs root/CAP_SYS_ADMIN)."""

import subprocess

import numpy as np
import pyarrow as pa
import pytest

from marin_assets.data.spark.parquet_output import write_parquet

pytestmark = pytest.mark.slow


@pytest.fixture
def full_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full_in_a_spark_worker_names_the_output_file(spark, full_disk):
    rng = np.random.default_rng(0)
    rows = [(f"doc-{i}", rng.bytes(4096).hex()) for i in range(600)]  # ~5 MB of incompressible text
    df = spark.createDataFrame(rows, "id string, text string")
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    out_dir = f"{full_disk}/documents"
    with pytest.raises(Exception) as err:  # Spark raises its PythonException / Py4JJavaError
        write_parquet(df, schema, out_dir, n_files=2, key="id", sort_keys=["id"])
    text = str(err.value)
    assert "No space left on device" in text
    assert f"writing {out_dir}/part-0000" in text, text[-3000:]
