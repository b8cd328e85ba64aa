"""deployments/k8s: RBAC objects are valid Kubernetes and fit the launcher; node pools fit the catalog."""

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s

from marin_assets.train.k8s.manifests import JOBSET_GROUP, JOBSET_PLURAL, JOBSET_VERSION
from marin_assets.train.tpu_catalog import TPU_TYPES
from marin_assets_tests.deployments.rbac import RBAC_YAML, launcher_role, rbac_allows

REPO = Path(__file__).resolve().parents[2]
NODEPOOLS = REPO / "deployments" / "k8s" / "tpu-nodepools.md"
VALUES = yaml.safe_load((REPO / "deployments" / "helm" / "values.yaml").read_text())
API = k8s.ApiClient()
MODELS = {"Namespace": "V1Namespace", "ServiceAccount": "V1ServiceAccount", "Role": "V1Role",
          "RoleBinding": "V1RoleBinding"}


def _round_trip(obj, model: str):
    class Response:
        data = json.dumps(obj)

    return API.sanitize_for_serialization(API.deserialize(Response(), model))


def test_rbac_objects_are_valid_kubernetes():
    docs = list(yaml.safe_load_all(RBAC_YAML.read_text()))
    assert sorted(d["kind"] for d in docs) == sorted(MODELS)
    for doc in docs:
        assert _round_trip(doc, MODELS[doc["kind"]]) == doc, doc["kind"]


def test_role_grants_exactly_what_the_launcher_calls_in_its_namespace():
    ns = launcher_role()["metadata"]["namespace"]
    calls = [("POST", f"/apis/batch/v1/namespaces/{ns}/jobs"), ("GET", f"/apis/batch/v1/namespaces/{ns}/jobs/j"),
             ("DELETE", f"/apis/batch/v1/namespaces/{ns}/jobs/j"),
             ("POST", f"/apis/{JOBSET_GROUP}/{JOBSET_VERSION}/namespaces/{ns}/{JOBSET_PLURAL}"),
             ("GET", f"/apis/{JOBSET_GROUP}/{JOBSET_VERSION}/namespaces/{ns}/{JOBSET_PLURAL}/j"),
             ("DELETE", f"/apis/{JOBSET_GROUP}/{JOBSET_VERSION}/namespaces/{ns}/{JOBSET_PLURAL}/j"),
             ("POST", f"/api/v1/namespaces/{ns}/services"), ("DELETE", f"/api/v1/namespaces/{ns}/services/j"),
             ("GET", f"/api/v1/namespaces/{ns}/pods"), ("GET", f"/api/v1/namespaces/{ns}/pods/p/log")]
    assert all(rbac_allows(*call) for call in calls)
    # Nothing more: no pod exec, no secrets, no other namespace.
    assert not rbac_allows("GET", f"/api/v1/namespaces/{ns}/secrets/s")
    assert not rbac_allows("POST", f"/api/v1/namespaces/{ns}/pods/p/exec")
    assert not rbac_allows("POST", "/apis/batch/v1/namespaces/default/jobs")
    granted = sum(len(r["verbs"]) * len(r["resources"]) for r in launcher_role()["rules"])
    assert granted == len(calls)  # one (resource, verb) grant per call the launcher makes


def test_role_is_bound_to_the_helm_release_service_account():
    binding = next(d for d in yaml.safe_load_all(RBAC_YAML.read_text()) if d["kind"] == "RoleBinding")
    [subject] = binding["subjects"]
    assert subject["name"] == VALUES["global"]["serviceAccountName"] == VALUES["serviceAccount"]["name"]
    assert binding["roleRef"]["name"] == launcher_role()["metadata"]["name"]


def _nodepool_commands() -> list[dict]:
    text = re.sub(r"\\\n\s*", " ", NODEPOOLS.read_text())
    commands = []
    for line in text.splitlines():
        if "gcloud container node-pools create" in line:
            tokens = shlex.split(line.split("gcloud", 1)[1].split(";")[0])
            flags = {t.split("=")[0]: tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t.startswith("--")}
            commands.append(flags)
    return commands


def test_nodepool_examples_match_the_tpu_catalog():
    commands = _nodepool_commands()
    assert len(commands) >= 4
    for flags in commands:
        matches = [spec for spec in TPU_TYPES.values()
                   if (spec.machine_type, spec.topology, spec.hosts)
                   == (flags["--machine-type"], flags["--tpu-topology"], int(flags["--num-nodes"]))]
        assert matches, f"node pool {flags} fits no slice type in tpu_catalog"
    generations = {spec.generation for spec in TPU_TYPES.values()}
    documented = {next(s.generation for s in TPU_TYPES.values() if s.machine_type == f["--machine-type"])
                  for f in commands}
    assert documented == generations


@pytest.mark.parametrize("tpu_type", ["v5litepod-16", "v4-32", "v6e-16", "v5p-16", "v5litepod-8"])
def test_every_documented_slice_type_has_a_node_pool(tpu_type):
    spec = TPU_TYPES[tpu_type]
    assert any((f["--machine-type"], f["--tpu-topology"]) == (spec.machine_type, spec.topology)
               for f in _nodepool_commands())
