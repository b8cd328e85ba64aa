"""Every run executed in process (dg.materialize, the CLI, materialize-all) tags itself with its pid and host,
which dead_run_worker_sensor reads when no run worker logged a pid."""

import os
import socket

import dagster as dg

from marin_assets.defs.governance.run_health import dead_worker_runs, run_worker_pid
from marin_assets.resources.run_liveness import HOST_TAG, PID_TAG, recorded_process
from marin_assets.resources.storage_resource import StorageResource


@dg.asset
def touched(storage: StorageResource) -> None:
    assert storage.root_uri


def test_an_in_process_run_tags_its_pid_and_host_and_is_alive(tmp_path):
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([touched], instance=instance, resources={"storage": StorageResource(root_uri=str(tmp_path))})
        run = instance.get_run_by_id(result.run_id)
        assert run.tags[PID_TAG] == str(os.getpid()) and run.tags[HOST_TAG] == socket.gethostname()
        assert recorded_process(run) == (os.getpid(), socket.gethostname())
        assert run_worker_pid(instance, result.run_id) == os.getpid()
        assert dead_worker_runs(instance) == []  # finished, and its process alive anyway


def test_a_run_of_another_host_is_left_alone(tmp_path):
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([touched], instance=instance, resources={"storage": StorageResource(root_uri=str(tmp_path))})
        instance.add_run_tags(result.run_id, {HOST_TAG: "some-other-host", PID_TAG: "999999"})
        assert run_worker_pid(instance, result.run_id) is None  # its pid means nothing on this machine
