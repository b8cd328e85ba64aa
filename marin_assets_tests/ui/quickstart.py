"""The UI test's world: the quickstart's workspace, and runs launched the way materialize-all names them.

A copy of the sample data and recipes (e2e.workspace), cleaning without the trained curation steps
(so one partition cleans without eval_set and quality_classifier first), and the scaling suite's
results written as files. Every source's raw_corpus is materialized before the server starts, as
the quickstart leaves it: the source sensor, left on, must then request nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg

from marin_assets_tests.dagster_dev import LOCAL_INSTANCE_YAML, REPO_ROOT, DevServer
from marin_assets_tests.e2e.workspace import Workspace, make_workspace
from marin_assets_tests.recipe_edits import without_trained_curation
from marin_assets_tests.ui.plot_materializations import write_scaling_suite

CODE_LOCATION = ["-m", "marin_assets.definitions", "-a", "defs"]
SOURCE_SENSOR = "source_files_sensor"


def quickstart_workspace(base: Path) -> tuple[Workspace, dict[str, str]]:
    """(workspace, the MARIN_* environment of the server and of every command)."""
    ws = make_workspace(base)
    without_trained_curation(ws.recipes_dir / "cleaning.yaml")
    env = {k: v for k, v in ws.env().items() if k.startswith("MARIN_")}
    env["MARIN_ENV"] = "local"
    env["MARIN_SCALING_RECIPE"] = str(write_scaling_suite(base / "scaling_suite.yaml", ws.storage_root))
    return ws, env


INGEST_SCRIPT = """
import dagster as dg
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.definitions import defs
from marin_assets.stage_jobs import STAGE_JOB_TAG, job_name_for, run_tags

key = dg.AssetKey("raw_corpus")
job = job_name_for(defs.assets, key)
with dg.DagsterInstance.get() as instance:
    for name in load_sources().names:
        result = defs.resolve_job_def(job).execute_in_process(
            instance=instance, partition_key=name, asset_selection=[key],
            tags={**run_tags(key, name), STAGE_JOB_TAG: job})
        assert result.success, name
"""


def ingest_sources(home: Path, env: dict[str, str], timeout_s: float = 600) -> None:
    """raw_corpus of every source into the instance at `home`, as the quickstart's materialize-all does."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(LOCAL_INSTANCE_YAML, home / "dagster.yaml")
    subprocess.run([sys.executable, "-c", INGEST_SCRIPT], cwd=REPO_ROOT, check=True, timeout=timeout_s,
                   env={**os.environ, **env, "DAGSTER_HOME": str(home)})


def stop_sensor(home: Path, env: dict[str, str], name: str, timeout_s: float = 300) -> None:
    """`dagster sensor stop` into the instance; its code server lingers a minute after: not waited for."""
    command = [sys.executable, "-m", "dagster", "sensor", "stop", name, *CODE_LOCATION]
    proc = subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **env, "DAGSTER_HOME": str(home)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen, deadline = [], time.monotonic() + timeout_s
    try:
        for line in proc.stdout:
            seen.append(line)
            if line.startswith(f"Stopped sensor {name}"):
                return
            if time.monotonic() > deadline:
                break
        raise AssertionError(f"could not stop {name}:\n{''.join(seen)[-4000:]}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def submit_stage_run(server: DevServer, defs: dg.Definitions, keys: list[str], partition: str | None,
                     timeout_s: float = 300) -> str:
    """Launch through the last key's stage job with materialize-all's tags; retried while the code loads."""
    from dagster_graphql import DagsterGraphQLClient, DagsterGraphQLClientError

    from marin_assets.stage_jobs import job_name_for, run_tags

    key = dg.AssetKey(keys[-1])
    tags = {**run_tags(key, partition), **({"dagster/partition": partition} if partition else {})}
    client = DagsterGraphQLClient("127.0.0.1", port_number=server.port)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client.submit_job_execution(job_name_for(defs.assets or [], key), tags=tags, asset_selection=keys)
        except DagsterGraphQLClientError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)  # the code location is still loading
