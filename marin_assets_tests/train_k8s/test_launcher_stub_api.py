"""TpuPodLauncher end to end against a stub Kubernetes API server and the GCS emulator.

The launcher talks HTTP to StubKube with the real `kubernetes` client; the stub runs each pod's
command as a local process with the env a kubelet would give it; Pipes context and messages
travel through the GCS emulator exactly as they would through a bucket in production.
"""

import signal
import sys
import threading
import time

import dagster as dg
import pytest

from kubernetes.client.exceptions import ApiException

from marin_assets.train.k8s.launcher import SliceClient, SliceFailed
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.train.k8s.manifests import LaunchRequest, build_workload
from marin_assets.train.hardware import ResourceConfig
from marin_assets_tests.deployments.rbac import rbac_allows
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)
from marin_assets_tests.train_k8s.stub_kube import StubKube

NAMESPACE = "ml"
OUTPUT = "gs://marin-test/training"


def _asset(resources: ResourceConfig, mode: str):
    @dg.asset(name="slice_run")
    def slice_run(context: dg.AssetExecutionContext, tpu: TpuPodLauncher):
        command = [sys.executable, "-m", "marin_assets_tests.train_k8s.fake_trainer", mode]
        invocation = tpu.run(context=context, command=command, resources=resources, run_name="Tiny Run",
                             output_uri=OUTPUT, env={"EXTRA": "1"})
        reported = invocation.get_materialize_result()
        return dg.MaterializeResult(metadata={**reported.metadata,
                                              "messages": dg.MetadataValue.json(invocation.get_custom_messages())})

    return slice_run


def _launcher(kube: StubKube, bucket: str, **overrides) -> TpuPodLauncher:
    settings = dict(namespace=NAMESPACE, image="trainer:test", pipes_bucket=bucket, api_host=kube.host,
                    poll_interval_s=0.2, pipes_interval_s=0.2)
    return TpuPodLauncher(**{**settings, **overrides})


@pytest.fixture
def short_pipes_drain(monkeypatch):
    """Dagster's readers wait 10 s after a session closes for late messages; a failed launch sends none."""
    from dagster._core.pipes import utils

    monkeypatch.setattr(utils, "WAIT_FOR_LOGS_AFTER_EXECUTION_INTERVAL", 1)


def _assert_rbac_grants_every_call(kube: StubKube) -> None:
    """Every call the launcher made is one deployments/k8s/rbac.yaml grants (in its namespace)."""
    for method, path in kube.requests:
        assert rbac_allows(method, path.replace(f"/namespaces/{NAMESPACE}/", "/namespaces/marin-train/")), path


def _alive(kube: StubKube) -> list[str]:
    return [p.name for p in kube.created_pods if p.proc is not None and p.proc.poll() is None]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("resources", "kind", "pods"),
    [
        (ResourceConfig(accelerator="tpu", tpu_type="v4-16"), "Job", 2),
        (ResourceConfig(accelerator="tpu", tpu_type="v5litepod-8", num_slices=2), "JobSet", 2),
        (ResourceConfig(accelerator="gpu", gpu_type="h100-80gb", hosts_per_slice=2, chips_per_host=8), "Job", 2),
    ],
    ids=["v4-16-job", "2xv5litepod-8-jobset", "2xa3-h100-job"],
)
def test_slice_runs_reports_through_gcs_pipes_and_cleans_up(gcs_emulator, resources, kind, pods):
    with StubKube() as kube:
        result = dg.materialize([_asset(resources, "ok")],
                                resources={"tpu": _launcher(kube, gcs_emulator.bucket)})
        assert result.success
        [materialization] = result.asset_materializations_for_node("slice_run")
        assert materialization.metadata["final_eval_loss"].value == 2.5

        created = kube.created_pods
        assert len(created) == pods
        assert all(p.proc.returncode == 0 for p in created)
        assert all(p.namespace == NAMESPACE for p in created)
        # Every pod got the same command and the caller's env; each knows its own place in the slice.
        assert all(p.env["EXTRA"] == "1" and p.env["MARIN_OUTPUT_URI"] == OUTPUT for p in created)
        placements = sorted((p.env["MARIN_SLICE_ID"], p.env["MARIN_WORKER_ID"]) for p in created)
        if kind == "Job":
            assert placements == [("0", "0"), ("0", "1")]
            if resources.accelerator == "gpu":  # MaxText's gpu_multiprocess: rank and count per pod
                assert {p.env["NODE_RANK"] for p in created} == {"0", "1"}
                assert {p.env["NNODES"] for p in created} == {"2"} and "TPU_WORKER_ID" not in created[0].env
            else:
                assert {p.env["TPU_WORKER_ID"] for p in created} == {"0", "1"}
        else:
            assert placements == [("0", "0"), ("1", "0")]
            assert {p.env["MEGASCALE_SLICE_ID"] for p in created} == {"0", "1"}
            slice1 = next(p for p in created if p.env["MARIN_SLICE_ID"] == "1")
            assert "-slice-1-0." in slice1.env["TPU_WORKER_HOSTNAMES"]

        # Only the lead opened Pipes: one custom message, carrying worker 0 of slice 0's placement.
        [lead] = materialization.metadata["messages"].value
        assert (lead["MARIN_SLICE_ID"], lead["MARIN_WORKER_ID"]) == ("0", "0")
        assert lead["MARIN_RUN_NAME"] == "Tiny Run"

        # Finished workloads are deleted, with their Service; nothing is left on the "cluster".
        deletes = [path for method, path in kube.requests if method == "DELETE"]
        assert any(path.endswith(f"/{'jobs' if kind == 'Job' else 'jobsets'}/{created[0].labels['marin.dev/launch']}")
                   for path in deletes)
        assert any("/services/" in path for path in deletes) == (kind == "Job")
        assert kube.objects == {} and kube.pods == {}
        _assert_rbac_grants_every_call(kube)


@pytest.mark.slow
def test_pod_failure_raises_with_log_tail_and_deletes_the_slice(gcs_emulator, short_pipes_drain):
    resources = ResourceConfig(accelerator="tpu", tpu_type="v5litepod-16")  # 4 hosts
    with StubKube() as kube:
        with pytest.raises(SliceFailed) as failure:
            dg.materialize([_asset(resources, "fail")], resources={"tpu": _launcher(kube, gcs_emulator.bucket)})
        message = str(failure.value)
        assert "RESOURCE_EXHAUSTED: ran out of HBM" in message
        assert "exited 3" in message and "BackoffLimitExceeded" in message
        failed_pod = next(p for p in kube.created_pods if p.env["MARIN_WORKER_ID"] == "1")
        assert f"pod {failed_pod.name}" in message
        assert kube.objects == {} and _alive(kube) == []
        assert any(path.endswith("/log") for _, path in kube.requests)
        _assert_rbac_grants_every_call(kube)


def _interrupt_once_pods_run(kube: StubKube, bucket: str) -> None:
    """Materialize a hanging v4-16 slice and send the step SIGINT once both of its pods run."""
    main = threading.get_ident()

    def interrupt_when_running():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_alive(kube)) < 2:
            time.sleep(0.05)
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    resources = ResourceConfig(accelerator="tpu", tpu_type="v4-16")
    with pytest.raises((KeyboardInterrupt, dg.DagsterExecutionInterruptedError)):
        dg.materialize([_asset(resources, "hang")], resources={"tpu": _launcher(kube, bucket)})


@pytest.mark.slow
def test_interrupt_deletes_the_running_slice(gcs_emulator, short_pipes_drain):
    """Ctrl-C / a Dagster cancel arrives as an exception in the step; the slice must not outlive it."""
    with StubKube() as kube:
        _interrupt_once_pods_run(kube, gcs_emulator.bucket)
        assert len(kube.created_pods) == 2
        assert all(p.killed for p in kube.created_pods)
        assert kube.objects == {} and _alive(kube) == []


@pytest.mark.slow
def test_interrupt_before_the_create_reply_still_deletes_the_slice(gcs_emulator, short_pipes_drain):
    """The server made the Job and its pods, but its reply has not arrived when the interrupt lands."""
    with StubKube(create_reply_delay_s=5.0) as kube:
        _interrupt_once_pods_run(kube, gcs_emulator.bucket)
        job = kube.created_pods[0].labels["marin.dev/launch"]
        assert ("DELETE", f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{job}") in kube.requests
        assert all(p.killed for p in kube.created_pods)
        assert kube.objects == {} and _alive(kube) == []


@pytest.mark.slow
def test_timeout_while_pending_deletes_the_slice(gcs_emulator, short_pipes_drain):
    resources = ResourceConfig(accelerator="tpu", tpu_type="v5litepod-4")  # single host
    with StubKube(run_pods=False) as kube:
        with pytest.raises(TimeoutError, match="still pending after 1 s: 0/1 pods running"):
            dg.materialize([_asset(resources, "ok")],
                           resources={"tpu": _launcher(kube, gcs_emulator.bucket, timeout_s=1.0)})
        assert kube.objects == {}
        assert ("DELETE", f"/api/v1/namespaces/{NAMESPACE}/services/{kube.created_pods[0].labels['marin.dev/launch']}") \
            in kube.requests


def test_name_clash_fails_without_deleting_the_other_launch():
    """A 409 from the API server fails the launch; it removes its own Service, not the other Job."""
    request = LaunchRequest(run_name="clash", command=["true"], image="x", output_uri=OUTPUT, namespace=NAMESPACE,
                            resources=ResourceConfig(accelerator="tpu", tpu_type="v5litepod-4"), launch_id="same")
    workload = build_workload(request)
    with StubKube(run_pods=False) as kube:
        kube.create("Job", NAMESPACE, workload.body)
        client = TpuPodLauncher(image="x", pipes_bucket="b", api_host=kube.host).api_client()
        with pytest.raises(ApiException) as error:
            SliceClient(client, poll_interval_s=0.1, log=lambda _: None).run(workload)
        assert error.value.status == 409
        assert ("Job", NAMESPACE, workload.name) in kube.objects
        assert ("Service", NAMESPACE, workload.name) not in kube.objects
