"""deployments/k8s/gpu-nodepools.md: every node pool command matches a GPU type of the catalog, and the
run it documents builds a workload that selects that pool."""

import re
import shlex
from pathlib import Path

import yaml

from marin_assets.train.gpu_catalog import GPU_TYPES
from marin_assets.train.k8s.manifests import LaunchRequest, build_workload
from marin_assets.train.hardware import ResourceConfig

DOC = Path(__file__).resolve().parents[2] / "deployments" / "k8s" / "gpu-nodepools.md"


def _commands() -> list[dict]:
    text = re.sub(r"\\\n\s*", " ", DOC.read_text())
    out = []
    for line in text.splitlines():
        if "gcloud container node-pools create" in line:
            tokens = shlex.split(line.split("gcloud", 1)[1])
            out.append({t: tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t.startswith("--")})
    return out


def test_gpu_nodepools_match_the_catalog():
    commands = _commands()
    assert len(commands) == 3
    for flags in commands:
        accelerator = dict(part.split("=", 1) for part in flags["--accelerator"].split(","))
        [spec] = [s for s in GPU_TYPES.values() if s.machine_type == flags["--machine-type"]
                  and s.gke_accelerator == accelerator["type"]]
        assert int(accelerator["count"]) == spec.gpus_per_node
        assert flags["--total-min-nodes"] == "0"  # idle GPUs cost nothing


def test_documented_run_selects_the_pool():
    block = DOC.read_text().split("```yaml", 1)[1].split("```", 1)[0]
    resources = ResourceConfig(**yaml.safe_load(block)["150m-a3x2"]["resources"])
    workload = build_workload(LaunchRequest(run_name="150m-a3x2", command=["python"], image="img", resources=resources,
                                            output_uri="gs://b/training"))
    pod = workload.body["spec"]["template"]["spec"]
    pools = {(f["--machine-type"], f["--accelerator"].split(",")[0].split("=")[1]) for f in _commands()}
    assert (pod["nodeSelector"]["node.kubernetes.io/instance-type"],
            pod["nodeSelector"]["cloud.google.com/gke-accelerator"]) in pools
    assert workload.num_pods == 2
