"""What GKE needs to run one command on every host of a TPU slice (pure: no cluster, no Dagster).

One slice  -> an Indexed Job (pods = hosts of the slice) + a headless Service, so pod `i` is
              reachable as `<name>-<i>.<name>` (TPU_WORKER_HOSTNAMES, the JAX coordinator).
N slices   -> a JobSet (jobset.x-k8s.io/v1alpha2): one Indexed Job per slice, DNS hostnames on,
              one slice per node pool; pods of slice `s` are `<name>-slice-<s>-<i>.<name>`.

Every pod runs the same command and learns its place from its own annotations (fieldRef), so the
manifests work with or without GKE's TPU webhook: MARIN_WORKER_ID / TPU_WORKER_ID (the Job's
completion index), MARIN_SLICE_ID / MEGASCALE_SLICE_ID (the JobSet's job index), the hostname list
of its slice, and for multislice the MEGASCALE_* coordinator. Multi-process CPU runs get MaxText's
CPU variables (JAX_COORDINATOR_ADDRESS, PROCESSES_IN_JOB, ...) instead of TPU node selectors.
GPU runs (one node per process) request `nvidia.com/gpu`, select the GKE A3/A2/G2 node pool of their
gpu_type, tolerate its GPU taint, get a memory-backed /dev/shm for NCCL, and MaxText's
`gpu_multiprocess` variables (JAX_COORDINATOR_IP/PORT, NNODES, NODE_RANK).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubernetes import client as k8s

from marin_assets.core.hashing import sha256_bytes
from marin_assets.train.hardware import ResourceConfig

JOBSET_GROUP, JOBSET_VERSION, JOBSET_PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
SLICE_JOB = "slice"                      # the JobSet's replicated job name
CONTAINER = "train"
LAUNCH_LABEL = "marin.dev/launch"        # selects the pods of one launch
RUN_LABEL = "marin.dev/run"
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
JOBSET_JOB_INDEX = "metadata.annotations['jobset.sigs.k8s.io/job-index']"
TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
SHM_VOLUME = "dshm"
JAX_COORDINATOR_PORT = 8476
MAX_NAME = 40                            # leaves room for "-slice-<s>-<i>" in a 63-char hostname
FINISHED_TTL_S = 24 * 3600               # finished objects vanish even if the launcher died
RESERVED_ENV = frozenset({
    "MARIN_WORKER_ID", "MARIN_SLICE_ID", "TPU_WORKER_ID", "TPU_WORKER_HOSTNAMES", "MEGASCALE_COORDINATOR_ADDRESS",
    "MEGASCALE_NUM_SLICES", "MEGASCALE_SLICE_ID", "JAX_COORDINATOR_ADDRESS", "JOB_INDEX", "PROCESSES_IN_JOB",
    "JAX_PROCESS_COUNT", "JOB_COMPLETION_INDEX", "MARIN_RUN_NAME", "MARIN_OUTPUT_URI",
    "JAX_COORDINATOR_IP", "JAX_COORDINATOR_PORT", "NNODES", "NODE_RANK",
})


class LaunchSpecError(ValueError):
    """The launch cannot be expressed as a slice workload; the message names the field."""


@dataclass(frozen=True)
class LaunchRequest:
    run_name: str
    command: list[str]
    image: str
    resources: ResourceConfig
    output_uri: str                      # MaxText base_output_directory; shared storage (gs://)
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, str] = field(default_factory=dict)  # NAME -> "secret/key": credentials stay in Secrets
    namespace: str = "default"
    service_account: str | None = None
    launch_id: str = ""                  # unique per launch (the Dagster run id): fresh object names
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SliceWorkload:
    kind: str                            # "Job" | "JobSet"
    name: str
    namespace: str
    body: dict                           # JSON-ready object for the API server
    service: dict | None                 # headless Service (Job only; JobSet makes its own)
    num_pods: int

    @property
    def pod_selector(self) -> str:
        return f"{LAUNCH_LABEL}={self.name}"


def dns_label(text: str) -> str:
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-")
    if not slug:
        return ""
    return slug if slug[0].isalpha() else f"r-{slug}"


def workload_name(run_name: str, launch_id: str) -> str:
    suffix = dns_label(launch_id)[-8:].strip("-") if launch_id else sha256_bytes(run_name.encode())[:8]
    base = (dns_label(run_name) or "run")[: MAX_NAME - len(suffix) - 1].rstrip("-")
    return f"{base}-{suffix}"


def build_workload(req: LaunchRequest) -> SliceWorkload:
    res = req.resources
    _validate(req)
    name = workload_name(req.run_name, req.launch_id)
    labels = {**req.labels, LAUNCH_LABEL: name, RUN_LABEL: dns_label(req.run_name)[:63].rstrip("-"),
              "app.kubernetes.io/managed-by": "marin-assets"}
    multislice = res.num_slices > 1
    hostname = (lambda i: f"{name}-{SLICE_JOB}-$(MARIN_SLICE_ID)-{i}.{name}") if multislice else (
        lambda i: f"{name}-{i}.{name}")
    env = _placement_env(res, name, multislice, hostname) + _plain_env({
        **res.process_env(), **req.env, "MARIN_RUN_NAME": req.run_name, "MARIN_OUTPUT_URI": req.output_uri,
    }) + _secret_env(req.secret_env)
    job_spec = _job_spec(req, labels, env, subdomain=None if multislice else name)
    if not multislice:
        job = k8s.V1Job(api_version="batch/v1", kind="Job", spec=job_spec,
                        metadata=k8s.V1ObjectMeta(name=name, namespace=req.namespace, labels=labels))
        service = k8s.V1Service(
            api_version="v1", kind="Service",
            metadata=k8s.V1ObjectMeta(name=name, namespace=req.namespace, labels=labels),
            spec=k8s.V1ServiceSpec(cluster_ip="None", selector={LAUNCH_LABEL: name}, publish_not_ready_addresses=True,
                                   ports=[k8s.V1ServicePort(name="coordinator", port=JAX_COORDINATOR_PORT)]),
        )
        return SliceWorkload("Job", name, req.namespace, _json(job), _json(service), res.hosts_per_slice)
    jobset = {
        "apiVersion": f"{JOBSET_GROUP}/{JOBSET_VERSION}",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": req.namespace, "labels": labels,
                     # one slice per node pool: the slices of a multislice run never share ICI
                     "annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}},
        "spec": {
            "failurePolicy": {"maxRestarts": 0},      # a lost host kills the step; Dagster retries the run
            "successPolicy": {"operator": "All"},
            "network": {"enableDNSHostnames": True, "subdomain": name, "publishNotReadyAddresses": True},
            "ttlSecondsAfterFinished": FINISHED_TTL_S,
            "replicatedJobs": [{"name": SLICE_JOB, "replicas": res.num_slices,
                                "template": {"metadata": {"labels": labels}, "spec": _json(job_spec)}}],
        },
    }
    return SliceWorkload("JobSet", name, req.namespace, jobset, None, res.num_processes)


def _validate(req: LaunchRequest) -> None:
    res = req.resources
    if not req.command:
        raise LaunchSpecError("command is empty")
    if not req.image:
        raise LaunchSpecError("image is empty: set the launcher's training image")
    if res.num_processes > 1 and not req.output_uri.startswith("gs://"):
        raise LaunchSpecError(
            f"output_uri={req.output_uri!r}: a {res.num_processes}-process run needs shared storage (gs://...) "
            "for checkpoints and TensorBoard; set MARIN_STORAGE_ROOT to a gs:// root")
    if res.accelerator != "tpu" and res.num_slices > 1:
        raise LaunchSpecError(f"resources.num_slices > 1 needs TPUs; a multi-process {res.accelerator.upper()} run is "
                              "one slice: raise resources.hosts_per_slice instead")
    if not dns_label(req.run_name):
        raise LaunchSpecError(f"run_name={req.run_name!r} has no letters or digits to name Kubernetes objects")
    reserved = sorted((set(req.env) | set(req.secret_env)) & RESERVED_ENV)
    if reserved:
        raise LaunchSpecError(f"env sets {reserved}: the launcher derives these from the slice layout")
    for name, ref in req.secret_env.items():
        secret, _, key = ref.partition("/")
        if not (dns_label(secret) == secret and key):
            raise LaunchSpecError(f"secret_env[{name!r}]={ref!r}: expected '<secret name>/<key>'")
        if name in req.env:
            raise LaunchSpecError(f"{name} is set both as a plain value and from a Secret")


def _placement_env(res: ResourceConfig, name: str, multislice: bool, hostname) -> list[k8s.V1EnvVar]:
    hosts = ",".join(hostname(i) for i in range(res.hosts_per_slice))
    env = [_field_env("MARIN_WORKER_ID", COMPLETION_INDEX),
           _field_env("MARIN_SLICE_ID", JOBSET_JOB_INDEX) if multislice else k8s.V1EnvVar("MARIN_SLICE_ID", "0")]
    if res.accelerator == "cpu":   # MaxText's hardware=cpu multi-process variables (XPK convention)
        return env + _plain_env({"JAX_COORDINATOR_ADDRESS": hostname(0), "JOB_INDEX": "0",
                                 "PROCESSES_IN_JOB": str(res.hosts_per_slice),
                                 "JAX_PROCESS_COUNT": str(res.num_processes)})
    if res.accelerator == "gpu":   # MaxText's hardware=gpu_multiprocess (max_utils.initialize_jax_for_gpu)
        return env + _plain_env({"JAX_COORDINATOR_IP": hostname(0), "JAX_COORDINATOR_PORT": str(JAX_COORDINATOR_PORT),
                                 "NNODES": str(res.num_processes), "NODE_RANK": "$(MARIN_WORKER_ID)"})
    env += _plain_env({"TPU_WORKER_ID": "$(MARIN_WORKER_ID)", "TPU_WORKER_HOSTNAMES": hosts})
    if multislice:
        env += _plain_env({"MEGASCALE_COORDINATOR_ADDRESS": f"{name}-{SLICE_JOB}-0-0.{name}",
                           "MEGASCALE_NUM_SLICES": str(res.num_slices), "MEGASCALE_SLICE_ID": "$(MARIN_SLICE_ID)"})
    return env


def _job_spec(req: LaunchRequest, labels: dict, env: list, subdomain: str | None) -> k8s.V1JobSpec:
    res = req.resources
    limits, requests, node_selector, tolerations = {}, {}, None, None
    if res.accelerator == "tpu":
        limits[TPU_RESOURCE] = requests[TPU_RESOURCE] = str(res.chips_per_host)
        node_selector = {"cloud.google.com/gke-tpu-accelerator": res.tpu.gke_accelerator,
                         "cloud.google.com/gke-tpu-topology": res.topology}
        tolerations = [k8s.V1Toleration(key=TPU_RESOURCE, operator="Exists", effect="NoSchedule")]
    volumes, mounts = None, None
    if res.accelerator == "gpu":
        limits[GPU_RESOURCE] = requests[GPU_RESOURCE] = str(res.chips_per_host)
        node_selector = {GKE_ACCELERATOR_LABEL: res.gpu.gke_accelerator,
                         "node.kubernetes.io/instance-type": res.gpu.machine_type}
        tolerations = [k8s.V1Toleration(key=GPU_RESOURCE, operator="Exists", effect="NoSchedule")]
        # NCCL shares buffers through /dev/shm; the container default (64 MiB) is too small
        volumes = [k8s.V1Volume(name=SHM_VOLUME, empty_dir=k8s.V1EmptyDirVolumeSource(medium="Memory"))]
        mounts = [k8s.V1VolumeMount(name=SHM_VOLUME, mount_path="/dev/shm")]
    if res.cpu_cores:
        requests["cpu"] = str(res.cpu_cores)
    if res.memory_gib:
        requests["memory"] = limits["memory"] = f"{int(res.memory_gib * 1024)}Mi"
    container = k8s.V1Container(
        name=CONTAINER, image=req.image, command=list(req.command), env=env,
        resources=k8s.V1ResourceRequirements(limits=limits or None, requests=requests or None),
        ports=[k8s.V1ContainerPort(container_port=JAX_COORDINATOR_PORT, name="coordinator")],
        volume_mounts=mounts,
    )
    pod = k8s.V1PodSpec(containers=[container], restart_policy="Never", subdomain=subdomain,
                        service_account_name=req.service_account, node_selector=node_selector,
                        tolerations=tolerations, volumes=volumes,
                        # SIGTERM -> checkpoint on every host -> exit EXIT_PREEMPTED, before the SIGKILL
                        termination_grace_period_seconds=res.preemption_grace_s)
    return k8s.V1JobSpec(
        completion_mode="Indexed", completions=res.hosts_per_slice, parallelism=res.hosts_per_slice,
        backoff_limit=0, ttl_seconds_after_finished=FINISHED_TTL_S,
        template=k8s.V1PodTemplateSpec(metadata=k8s.V1ObjectMeta(labels=labels), spec=pod),
    )


def _field_env(name: str, path: str) -> k8s.V1EnvVar:
    return k8s.V1EnvVar(name=name, value_from=k8s.V1EnvVarSource(field_ref=k8s.V1ObjectFieldSelector(field_path=path)))


def _secret_env(refs: Mapping[str, str]) -> list[k8s.V1EnvVar]:
    return [k8s.V1EnvVar(name=name, value_from=k8s.V1EnvVarSource(secret_key_ref=k8s.V1SecretKeySelector(
        name=ref.partition("/")[0], key=ref.partition("/")[2]))) for name, ref in sorted(refs.items())]


def _plain_env(values: Mapping[str, str]) -> list[k8s.V1EnvVar]:
    return [k8s.V1EnvVar(name=k, value=str(v)) for k, v in values.items()]


def _json(model) -> dict:
    return _SERIALIZER.sanitize_for_serialization(model)


_SERIALIZER = k8s.ApiClient()
