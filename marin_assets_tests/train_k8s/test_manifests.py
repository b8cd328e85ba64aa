"""Slice manifests for every supported slice type, checked against the Kubernetes API models.

Round trip: each manifest is deserialized into the `kubernetes` client's models (V1Job, V1Service,
V1JobTemplateSpec for each JobSet replicated job) and serialized again; it must come back
identical, so no field is misspelled or misplaced (the models drop what they do not know).
JobSet is a CRD without client models: its own fields are checked against jobset.x-k8s.io/v1alpha2
(api/jobset/v1alpha2/jobset_types.go).
"""

import json
import re

import pytest
from kubernetes import client as k8s

from marin_assets.train.k8s.manifests import (
    COMPLETION_INDEX,
    JOBSET_JOB_INDEX,
    LaunchRequest,
    LaunchSpecError,
    build_workload,
    workload_name,
)
from marin_assets.train.hardware import ResourceConfig
from marin_assets.train.tpu_catalog import TPU_TYPES

API = k8s.ApiClient()
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
JOBSET_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
JOBSET_SPEC_FIELDS = {"replicatedJobs", "network", "successPolicy", "failurePolicy", "startupPolicy", "suspend",
                      "coordinator", "managedBy", "ttlSecondsAfterFinished", "volumeClaimPolicies"}
REPLICATED_JOB_FIELDS = {"name", "groupName", "template", "replicas", "dependsOn"}
NETWORK_FIELDS = {"enableDNSHostnames", "subdomain", "publishNotReadyAddresses"}
FIELD_REFS = {COMPLETION_INDEX, JOBSET_JOB_INDEX}

CASES = [(ResourceConfig(accelerator="tpu", tpu_type=name), f"{name}") for name in TPU_TYPES] + [
    (ResourceConfig(accelerator="tpu", tpu_type="v5litepod-16", num_slices=2), "2xv5litepod-16"),
    (ResourceConfig(accelerator="tpu", tpu_type="v5p-8", num_slices=4), "4xv5p-8"),
    (ResourceConfig(accelerator="tpu", tpu_type="v6e-256", num_slices=2, cpu_cores=200, memory_gib=700), "2xv6e-256"),
    (ResourceConfig(accelerator="cpu", hosts_per_slice=2, chips_per_host=4, cpu_cores=2, memory_gib=8), "cpu-2x4"),
    (ResourceConfig(accelerator="gpu", gpu_type="h100-80gb", hosts_per_slice=2, chips_per_host=8), "a3-h100-2x8"),
    (ResourceConfig(accelerator="gpu", gpu_type="a100-40gb", hosts_per_slice=4, chips_per_host=8), "a2-a100-4x8"),
    (ResourceConfig(accelerator="gpu", gpu_type="l4-24gb", hosts_per_slice=2, chips_per_host=1), "g2-l4-2x1"),
]


def _request(resources: ResourceConfig, **overrides) -> LaunchRequest:
    fields = dict(run_name="llama_150m.suite/budget=1e18", command=["python", "-m", "marin_assets.train.maxtext_entry",
                  "gs://b/training/r/maxtext.yml"], image="us-docker.pkg.dev/p/marin/tpu-train:abc", resources=resources,
                  output_uri="gs://b/training", env={"JAX_CACHE": "gs://b/cache"}, namespace="ml",
                  secret_env={"WANDB_API_KEY": "wandb/api-key"},
                  service_account="marin-train", launch_id="0f1e2d3c")
    return LaunchRequest(**{**fields, **overrides})


def _round_trip(obj: dict, model: str) -> dict:
    class Response:
        data = json.dumps(obj)

    return API.sanitize_for_serialization(API.deserialize(Response(), model))


def _job_templates(workload) -> list[dict]:
    if workload.kind == "Job":
        return [workload.body["spec"]]
    return [rj["template"]["spec"] for rj in workload.body["spec"]["replicatedJobs"]]


@pytest.mark.parametrize(("resources", "case"), CASES, ids=[c for _, c in CASES])
def test_manifest_is_valid_kubernetes_and_fits_the_slice(resources, case):
    workload = build_workload(_request(resources))
    multislice = resources.num_slices > 1
    assert workload.kind == ("JobSet" if multislice else "Job")
    assert workload.num_pods == resources.num_processes
    assert DNS_LABEL.match(workload.name)

    if workload.kind == "Job":
        assert _round_trip(workload.body, "V1Job") == workload.body
        assert _round_trip(workload.service, "V1Service") == workload.service
        service = workload.service["spec"]
        assert service["clusterIP"] == "None" and service["publishNotReadyAddresses"] is True
        assert workload.body["spec"]["template"]["spec"]["subdomain"] == workload.service["metadata"]["name"]
        pod_labels = workload.body["spec"]["template"]["metadata"]["labels"]
        assert service["selector"].items() <= pod_labels.items()
    else:
        body = workload.body
        assert set(body) == JOBSET_FIELDS and body["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
        assert set(body["spec"]) <= JOBSET_SPEC_FIELDS
        assert set(body["spec"]["network"]) <= NETWORK_FIELDS and body["spec"]["network"]["enableDNSHostnames"]
        assert _round_trip(body["metadata"], "V1ObjectMeta") == body["metadata"]
        [rjob] = body["spec"]["replicatedJobs"]
        assert set(rjob) <= REPLICATED_JOB_FIELDS
        assert rjob["replicas"] == resources.num_slices
        assert _round_trip(rjob["template"], "V1JobTemplateSpec") == rjob["template"]
        assert workload.service is None  # the JobSet controller makes the headless service

    for job in _job_templates(workload):
        assert job["completions"] == job["parallelism"] == resources.hosts_per_slice
        assert job["completionMode"] == "Indexed" and job["backoffLimit"] == 0
        pod = job["template"]["spec"]
        assert pod["restartPolicy"] == "Never" and pod["serviceAccountName"] == "marin-train"
        [container] = pod["containers"]
        assert container["command"][-1] == "gs://b/training/r/maxtext.yml"
        env = _check_env(container["env"])
        if resources.accelerator == "tpu":
            spec = resources.tpu
            assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": spec.gke_accelerator,
                                           "cloud.google.com/gke-tpu-topology": spec.topology}
            assert container["resources"]["limits"]["google.com/tpu"] == str(spec.chips_per_host)
            assert resources.chips_per_host * resources.hosts_per_slice == spec.chips
            assert env["TPU_WORKER_ID"] == "$(MARIN_WORKER_ID)"
            _check_hostnames(env["TPU_WORKER_HOSTNAMES"], workload, resources)
            if multislice:
                assert env["MEGASCALE_NUM_SLICES"] == str(resources.num_slices)
                assert env["MEGASCALE_COORDINATOR_ADDRESS"] == f"{workload.name}-slice-0-0.{workload.name}"
            else:
                assert "MEGASCALE_NUM_SLICES" not in env
        elif resources.accelerator == "gpu":
            gpu = resources.gpu
            assert pod["nodeSelector"]["cloud.google.com/gke-accelerator"] == gpu.gke_accelerator
            assert container["resources"]["limits"]["nvidia.com/gpu"] == str(resources.chips_per_host)
            assert resources.chips_per_host <= gpu.gpus_per_node
            assert env["NNODES"] == str(resources.hosts_per_slice) and env["NODE_RANK"] == "$(MARIN_WORKER_ID)"
            assert env["JAX_COORDINATOR_IP"] == f"{workload.name}-0.{workload.name}"
        else:
            assert "nodeSelector" not in pod and "google.com/tpu" not in container["resources"]["limits"]
            assert env["JAX_COORDINATOR_ADDRESS"] == f"{workload.name}-0.{workload.name}"
            assert env["PROCESSES_IN_JOB"] == env["JAX_PROCESS_COUNT"] == "2"
            assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=4"
        if resources.memory_gib:
            assert container["resources"]["limits"]["memory"] == f"{int(resources.memory_gib * 1024)}Mi"


def _check_env(env_list: list[dict]) -> dict:
    """Unique names; $(VAR) only refers to earlier variables (Kubernetes expands in order); fieldRefs known."""
    seen: dict[str, str] = {}
    for var in env_list:
        assert var["name"] not in seen, f"duplicate env {var['name']}"
        if "valueFrom" in var:
            source = var["valueFrom"]
            if "secretKeyRef" in source:  # credentials come from a Secret, never as a plain value
                seen[var["name"]] = f"<secret {source['secretKeyRef']['name']}/{source['secretKeyRef']['key']}>"
                continue
            assert source["fieldRef"]["fieldPath"] in FIELD_REFS
            seen[var["name"]] = "<fieldRef>"
            continue
        for ref in re.findall(r"\$\(([A-Z_]+)\)", var["value"]):
            assert ref in seen, f"{var['name']} refers to {ref} before it is defined"
        seen[var["name"]] = var["value"]
    assert seen["MARIN_OUTPUT_URI"] == "gs://b/training" and seen["JAX_CACHE"] == "gs://b/cache"
    assert seen["WANDB_API_KEY"] == "<secret wandb/api-key>"
    return seen


def _check_hostnames(hostnames: str, workload, resources) -> None:
    hosts = hostnames.split(",")
    assert len(hosts) == resources.hosts_per_slice
    last_slice = str(resources.num_slices - 1)
    for i, host in enumerate(hosts):
        pod_host, subdomain = host.replace("$(MARIN_SLICE_ID)", last_slice).split(".")
        assert subdomain == workload.name and DNS_LABEL.match(pod_host), host
        assert pod_host.endswith(f"-{i}")


def test_names_are_dns_labels_stable_and_unique_per_launch():
    long = "A" * 200 + "_run"
    assert workload_name(long, "abc") == workload_name(long, "abc")
    assert workload_name(long, "abc") != workload_name(long, "abd")
    assert workload_name("run", "") == workload_name("run", "")  # no launch id: hash of the run name
    for name in (workload_name(long, "0f1e2d3c-aaaa"), workload_name("9lives", "x"), workload_name("--", "y")):
        assert DNS_LABEL.match(name) and len(name) <= 40


@pytest.mark.parametrize(
    ("resources", "overrides", "field"),
    [
        (ResourceConfig(accelerator="gpu", gpu_type="h100-80gb", hosts_per_slice=2, num_slices=2), {},
         "raise resources.hosts_per_slice"),
        (ResourceConfig(accelerator="gpu", gpu_type="h100-80gb", hosts_per_slice=2), {"env": {"NODE_RANK": "1"}},
         "NODE_RANK"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-32"), {"output_uri": "/tmp/out"}, "needs shared storage"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"env": {"TPU_WORKER_ID": "0"}}, "TPU_WORKER_ID"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"command": []}, "command is empty"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"image": ""}, "image is empty"),
        (ResourceConfig(accelerator="cpu", hosts_per_slice=2, num_slices=2), {}, "num_slices > 1 needs TPUs"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"run_name": "__"}, "run_name"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"secret_env": {"K": "no-key"}}, "secret_env['K']"),
        (ResourceConfig(accelerator="tpu", tpu_type="v4-8"), {"secret_env": {"JAX_CACHE": "s/k"}},
         "JAX_CACHE is set both"),
    ],
)
def test_bad_launches_are_refused_naming_the_field(resources, overrides, field):
    with pytest.raises(LaunchSpecError, match=re.escape(field)):
        build_workload(_request(resources, **overrides))


def test_single_host_slice_may_write_locally():
    workload = build_workload(_request(ResourceConfig(accelerator="tpu", tpu_type="v5litepod-8"), output_uri="/data/out"))
    assert workload.num_pods == 1


def test_gpu_pods_request_gpus_on_their_node_pool_with_maxtexts_multiprocess_env():
    res = ResourceConfig(accelerator="gpu", gpu_type="h100-80gb", hosts_per_slice=2, chips_per_host=8)
    workload = build_workload(_request(res))
    assert workload.kind == "Job" and workload.num_pods == 2
    job = _round_trip(workload.body, "V1Job")
    assert job["spec"]["completions"] == 2 and job["spec"]["completionMode"] == "Indexed"
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8" == container["resources"]["requests"]["nvidia.com/gpu"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
                                   "node.kubernetes.io/instance-type": "a3-highgpu-8g"}
    assert pod["tolerations"] == [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
    assert pod["volumes"][0]["emptyDir"] == {"medium": "Memory"} and container["volumeMounts"][0]["mountPath"] == "/dev/shm"
    env = {e["name"]: e.get("value") for e in container["env"]}
    name = workload.name
    assert env["JAX_COORDINATOR_IP"] == f"{name}-0.{name}" and env["JAX_COORDINATOR_PORT"] == "8476"
    assert env["NNODES"] == "2" and env["NODE_RANK"] == "$(MARIN_WORKER_ID)"
    assert env["JAX_PLATFORMS"] == "cuda" and "xla_gpu_enable_latency_hiding_scheduler" in env["XLA_FLAGS"]
    assert not any(k.startswith("TPU_") for k in env)
    assert res.maxtext_hardware_keys()["hardware"] == "gpu_multiprocess"
