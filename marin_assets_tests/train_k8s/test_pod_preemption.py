"""A pod of a TPU slice preempted at a random step (SIGTERM, as GKE sends it) is retried by Dagster and resumes.

End to end against the stub Kubernetes API and the GCS emulator (Pipes): the launcher sees every
failed pod's `TrainingPreempted:` line, raises SlicePreempted, `run_on_slice` turns it into
TrainingPreempted and `retry_when_preempted` into Dagster's step retry (the path local runs take);
the retry's slice resumes from the latest checkpoint complete on all hosts.
"""

import os
import random
import re
import signal
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.train.checkpoints import checkpoint_steps
from marin_assets.train.k8s.launcher import FAILED, SliceClient, SliceState
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.train.k8s.training import preemption_summary, run_on_slice
from marin_assets.train.launchers import retry_when_preempted
from marin_assets.train.hardware import ResourceConfig
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)
from marin_assets_tests.train_k8s.stub_kube import StubKube
from marin_assets_tests.train_k8s.test_launcher_stub_api import _launcher, short_pipes_drain  # noqa: F401

STEPS = 40
RESOURCES = ResourceConfig(accelerator="tpu", tpu_type="v4-16", preemption_grace_s=45)  # 2 hosts


def _asset(checkpoints: str):
    @dg.asset(name="slice_run")
    def slice_run(context: dg.AssetExecutionContext, tpu: TpuPodLauncher):
        command = [sys.executable, "-m", "marin_assets_tests.train_k8s.preemptible_trainer", checkpoints, str(STEPS)]
        invocation = retry_when_preempted(context, lambda: run_on_slice(
            context, tpu, command=command, resources=RESOURCES, run_name="tiny", output_uri="gs://marin-test/t",
            env={"MARIN_HOSTS": str(RESOURCES.num_processes)}, checkpoints_dir=checkpoints))
        return dg.MaterializeResult(metadata={"summary": invocation.get_custom_messages()[-1]})

    return slice_run


def _preempt_at_random_step(kube: StubKube, at_step: int, done: dict) -> None:
    """SIGTERM every pod of the first slice once its lead logged `at_step` (a node pool reclaimed)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = [p for p in kube.created_pods if p.proc is not None]
        if len(pods) == RESOURCES.num_processes and f"completed step {at_step}\n" in open(pods[0].log_path).read():
            for pod in pods:
                pod.proc.send_signal(signal.SIGTERM)
            done["pods"] = [p.name for p in pods]
            return
        time.sleep(0.02)


@pytest.mark.slow
def test_a_pod_preempted_at_a_random_step_is_retried_and_resumes(gcs_emulator, short_pipes_drain, tmp_path):  # noqa: F811
    at_step = random.Random().randrange(3, STEPS - 10)
    checkpoints = str(tmp_path / "checkpoints")
    with StubKube() as kube:
        done: dict = {}
        watcher = threading.Thread(target=_preempt_at_random_step, args=(kube, at_step, done), daemon=True)
        watcher.start()
        with dg.instance_for_test() as instance:
            result = dg.materialize([_asset(checkpoints)], instance=instance,
                                    resources={"tpu": _launcher(kube, gcs_emulator.bucket)})
            logs = instance.all_logs(result.run_id)
            events = [e.dagster_event.event_type_value for e in logs if e.dagster_event is not None]
            messages = [e.user_message for e in logs]
        watcher.join()
    assert done.get("pods"), f"the slice was never preempted at step {at_step}"
    assert result.success
    assert "STEP_UP_FOR_RETRY" in events and "STEP_RESTARTED" in events
    summary = result.asset_materializations_for_node("slice_run")[0].metadata["summary"].value
    # The retry resumed from the step the launcher named: the preempted step when every host saved it,
    # else the last step complete on all hosts before it; never a step only some hosts saved.
    retry_warning = next(m for m in messages if "slice preempted" in m)
    named = re.search(r"every host checkpointed step (\d+)|resuming from step (\d+)", retry_warning)
    assert named, retry_warning
    resumed = int(named.group(1) or named.group(2))
    assert summary["resumed_from"] == resumed, (summary, retry_warning)
    hosts = {f"shard-{h}.json" for h in range(RESOURCES.num_processes)}
    assert hosts <= set(os.listdir(Path(checkpoints) / str(resumed)))
    assert summary["last_step"] == STEPS - 1 and checkpoint_steps(checkpoints)[-1] == STEPS - 1
    first_slice = [p for p in kube.created_pods if p.name in done["pods"]]
    # a host that checkpointed exits EXIT_PREEMPTED (a lead still waiting for a shard is killed with the slice)
    assert 3 in {p.proc.returncode for p in first_slice}
    first_pod = first_slice[0]
    assert first_pod.spec["terminationGracePeriodSeconds"] == 45
    assert first_pod.env["MARIN_PREEMPT_GRACE_S"] == str(RESOURCES.trainer_grace_s)


class _Pod:
    def __init__(self, name, reason=None, conditions=()):
        status = type("Status", (), {"reason": reason, "conditions": list(conditions), "phase": "Failed",
                                     "container_statuses": []})()
        self.metadata, self.status = type("Meta", (), {"name": name})(), status


class _Logs(SliceClient):
    def __init__(self, logs):
        self.logs, self.log_tail_lines = logs, 40

    def _log_tail(self, namespace, pod):
        return self.logs.get(pod, "")


def test_only_a_slice_whose_failed_pods_were_all_preempted_counts_as_preempted():
    workload = type("W", (), {"namespace": "ml"})()
    line = "TrainingPreempted: preempted by SIGTERM after step {0}; checkpoint {0} saved, a retry resumes from it"
    pods = [_Pod("a"), _Pod("b")]
    client = _Logs({"a": line.format(7), "b": line.format(7)})
    assert client.preempted_steps(workload, SliceState(FAILED, "", pods)) == {"a": 7, "b": 7}
    client = _Logs({"a": line.format(7), "b": "RESOURCE_EXHAUSTED: out of HBM"})
    assert client.preempted_steps(workload, SliceState(FAILED, "", pods)) is None
    evicted = _Pod("b", reason="Evicted")
    assert _Logs({"a": line.format(7)}).preempted_steps(workload, SliceState(FAILED, "", [pods[0], evicted])) == {
        "a": 7, "b": None}


def test_a_step_not_every_host_checkpointed_is_not_used(tmp_path):
    for step, complete in ((5, True), (7, False)):
        (tmp_path / str(step)).mkdir()
        if complete:
            (tmp_path / str(step) / "_CHECKPOINT_METADATA").write_text("{}")
    summary = preemption_summary({"a": 7, "b": 6}, str(tmp_path))
    assert "no checkpoint complete on all hosts" in summary and "resuming from step 5" in summary
    (tmp_path / "7" / "_CHECKPOINT_METADATA").write_text("{}")
    assert "every host checkpointed step 7" in preemption_summary({"a": 7, "b": 7}, str(tmp_path))
