"""Production instance config and Helm values, validated against Dagster's own schemas.

deployments/production/dagster.yaml goes through `dagster_instance_config` (the instance schema)
and each pluggable class section (run launcher, run coordinator, compute logs) through that
class's own `config_type()`. deployments/helm/values.yaml is checked against the chart's value
schema (field names from helm/dagster/schema/schema/charts/**: the chart rejects unknown keys),
its Kubernetes pieces against the `kubernetes` models, and the instance config the chart renders
from it (configmap-instance.yaml, camelCase -> snake_case) against the same Dagster schemas.
"""

import importlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from dagster._config import validate_config
from dagster._config.field_utils import convert_potential_field
from dagster._core.instance.config import dagster_instance_config
from kubernetes import client as k8s

REPO = Path(__file__).resolve().parents[2]
PRODUCTION = yaml.safe_load((REPO / "deployments" / "production" / "dagster.yaml").read_text())
VALUES = yaml.safe_load((REPO / "deployments" / "helm" / "values.yaml").read_text())
API = k8s.ApiClient()

# The chart's value schema (dagster 1.13 chart, schema/charts/dagster/values.py and subschemas).
CHART_TOP = {"dagsterWebserver", "dagster-user-deployments", "postgresql", "generatePostgresqlPasswordSecret",
             "generateCeleryConfigSecret", "rabbitmq", "redis", "flower", "ingress", "imagePullSecrets",
             "computeLogManager", "scheduler", "runLauncher", "pythonLogs", "dagsterDaemon", "busybox", "migrate",
             "telemetry", "serviceAccount", "global", "retention", "concurrency", "additionalInstanceConfig"}
CHART_GLOBAL = {"postgresqlSecretName", "dagsterHome", "serviceAccountName", "celeryConfigSecretName",
                "dagsterInstanceConfigMap"}
CHART_POSTGRES = {"postgresqlScheme", "image", "enabled", "postgresqlHost", "postgresqlUsername", "postgresqlPassword",
                  "postgresqlDatabase", "postgresqlParams", "service"}
CHART_USER_DEPLOYMENT = {"name", "image", "dagsterApiGrpcArgs", "codeServerArgs", "includeConfigInLaunchedRuns", "port",
                         "env", "envConfigMaps", "envSecrets", "annotations", "nodeSelector", "affinity", "tolerations",
                         "podSecurityContext", "securityContext", "resources", "livenessProbe", "readinessProbe",
                         "startupProbe", "labels", "volumeMounts", "volumes", "schedulerName"}
CHART_K8S_RUN_LAUNCHER = {"image", "imagePullPolicy", "jobNamespace", "loadInclusterConfig", "kubeconfigFile",
                          "envConfigMaps", "envSecrets", "envVars", "volumeMounts", "volumes", "labels",
                          "failPodOnRunFailure", "resources", "schedulerName", "securityContext", "runK8sConfig"}
CHART_RUN_K8S_CONFIG = {"containerConfig", "podSpecConfig", "podTemplateSpecMetadata", "jobSpecConfig", "jobMetadata"}
CHART_GCS_LOGS = {"localDir", "prefix", "jsonCredentialsEnvvar", "uploadInterval", "bucket"}
CHART_QUEUED = {"maxConcurrentRuns", "tagConcurrencyLimits", "dequeueIntervalSeconds", "dequeueNumWorkers",
                "dequeueUseThreads", "blockOpConcurrencyLimitedRuns"}
CHART_CONCURRENCY = {"enabled", "pools", "runs"}
CHART_RUNS = {"maxConcurrentRuns", "tagConcurrencyLimits"}
CHART_SERVICE_ACCOUNT = {"create", "name", "annotations"}
CHART_POOLS = {"defaultLimit", "granularity", "opGranularityRunBuffer"}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _snake_keys(obj):
    if isinstance(obj, dict):
        return {_snake(k): _snake_keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_snake_keys(v) for v in obj]
    return obj


def _validate_class_section(section: dict) -> None:
    """A pluggable section {module, class, config} against the class's own config schema."""
    cls = getattr(importlib.import_module(section["module"]), section["class"])
    result = validate_config(convert_potential_field(cls.config_type()).config_type, section.get("config") or {})
    assert result.success, f"{section['class']}: {[e.message for e in result.errors]}"


def _validate_instance(config: dict, tmp_path: Path) -> dict:
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(config))
    validated, custom_class = dagster_instance_config(str(tmp_path))
    assert custom_class is None
    for key in ("run_launcher", "run_coordinator", "compute_logs"):
        if key in config:
            _validate_class_section(config[key])
    return validated


def _round_trip(obj, model: str):
    class Response:
        data = json.dumps(obj)

    return API.sanitize_for_serialization(API.deserialize(Response(), model))


def test_production_dagster_yaml_is_a_valid_instance(tmp_path):
    validated = _validate_instance(PRODUCTION, tmp_path)
    assert validated["storage"]["postgres"]["postgres_db"]["password"] == {"env": "DAGSTER_PG_PASSWORD"}
    assert PRODUCTION["run_launcher"]["class"] == "K8sRunLauncher"
    assert PRODUCTION["compute_logs"]["class"] == "GCSComputeLogManager"
    assert PRODUCTION["concurrency"]["pools"]["default_limit"] >= 1


def test_production_yaml_misspelling_is_caught(tmp_path):
    """The validation above can fail: a typo in a class section is an error, not ignored."""
    broken = json.loads(json.dumps(PRODUCTION))
    broken["compute_logs"]["config"]["bucket_name"] = broken["compute_logs"]["config"].pop("bucket")
    with pytest.raises(AssertionError, match="GCSComputeLogManager"):
        _validate_instance(broken, tmp_path)


def test_no_secret_values_in_deployment_files():
    secretish = re.compile(r"password|secret|token|credential|private_key", re.I)

    def walk(obj, path=""):
        if isinstance(obj, dict):
            for key, value in obj.items():
                if secretish.search(key) and isinstance(value, str) and value:
                    # names of Secrets (references) are fine; literal values are not
                    assert key.endswith(("SecretName", "secret_name")) or key == "name", f"{path}.{key} = {value!r}"
                walk(value, f"{path}.{key}")
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                walk(value, f"{path}[{i}]")

    walk(VALUES)
    walk(PRODUCTION)


def test_helm_values_use_only_chart_fields_and_valid_kubernetes_objects():
    assert set(VALUES) <= CHART_TOP
    assert set(VALUES["global"]) <= CHART_GLOBAL
    assert set(VALUES["postgresql"]) <= CHART_POSTGRES and VALUES["postgresql"]["enabled"] is False
    assert VALUES["generatePostgresqlPasswordSecret"] is False and VALUES["global"]["postgresqlSecretName"]
    assert set(VALUES["serviceAccount"]) <= CHART_SERVICE_ACCOUNT
    assert VALUES["serviceAccount"]["name"] == VALUES["global"]["serviceAccountName"]

    [deployment] = VALUES["dagster-user-deployments"]["deployments"]
    assert set(deployment) <= CHART_USER_DEPLOYMENT
    args = deployment["dagsterApiGrpcArgs"]
    assert importlib.util.find_spec(args[args.index("--module-name") + 1]) is not None
    env = {e["name"]: e for e in deployment["env"]}
    assert [_round_trip(e, "V1EnvVar") for e in deployment["env"]] == deployment["env"]
    assert env["MARIN_ENV"]["value"] == "production"
    assert env["MARIN_STORAGE_ROOT"]["value"].startswith("gs://")
    assert all(set(s) == {"name"} for s in deployment["envSecrets"])   # secrets by reference
    assert _round_trip(deployment["resources"], "V1ResourceRequirements") == deployment["resources"]

    launcher = VALUES["runLauncher"]
    assert launcher["type"] == "K8sRunLauncher"
    k8s_launcher = launcher["config"]["k8sRunLauncher"]
    assert set(k8s_launcher) <= CHART_K8S_RUN_LAUNCHER
    assert set(k8s_launcher["runK8sConfig"]) <= CHART_RUN_K8S_CONFIG
    container = k8s_launcher["runK8sConfig"]["containerConfig"]
    assert set(container) <= set(k8s.V1Container.attribute_map.values())  # a partial container
    assert _round_trip(container["resources"], "V1ResourceRequirements") == container["resources"]
    assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*(=.*)?", v) for v in k8s_launcher["envVars"])

    logs = VALUES["computeLogManager"]
    assert logs["type"] == "GCSComputeLogManager" and set(logs["config"]["gcsComputeLogManager"]) <= CHART_GCS_LOGS
    coordinator = VALUES["dagsterDaemon"]["runCoordinator"]
    assert coordinator["type"] == "QueuedRunCoordinator"
    assert set(coordinator["config"]["queuedRunCoordinator"]) <= CHART_QUEUED
    assert set(VALUES["concurrency"]) <= CHART_CONCURRENCY and set(VALUES["concurrency"]["pools"]) <= CHART_POOLS
    assert set(VALUES["concurrency"]["runs"]) <= CHART_RUNS


def render_instance(values: dict) -> dict:
    """The instance config the chart's configmap-instance.yaml renders from these values."""
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    daemon = values["dagsterDaemon"]
    return {
        "storage": {"postgres": {"postgres_db": {
            "hostname": values["postgresql"]["postgresqlHost"], "port": values["postgresql"]["service"]["port"],
            "db_name": values["postgresql"]["postgresqlDatabase"], "username": values["postgresql"]["postgresqlUsername"],
            "password": {"env": "DAGSTER_PG_PASSWORD"}, "scheme": values["postgresql"]["postgresqlScheme"]}}},
        "run_launcher": {"module": "dagster_k8s", "class": "K8sRunLauncher", "config": {
            **_snake_keys({k: v for k, v in launcher.items() if k not in ("envSecrets", "envConfigMaps", "runK8sConfig")}),
            "env_secrets": [s["name"] for s in launcher["envSecrets"]],
            "env_config_maps": [c["name"] for c in launcher["envConfigMaps"]],
            "run_k8s_config": {_snake(k): v for k, v in launcher["runK8sConfig"].items()},
            "instance_config_map": "marin-dagster-instance", "dagster_home": "/opt/dagster/dagster_home",
            "service_account_name": values["global"]["serviceAccountName"]}},
        "run_coordinator": {"module": "dagster._core.run_coordinator.queued_run_coordinator",
                            "class": "QueuedRunCoordinator",
                            "config": _snake_keys(daemon["runCoordinator"]["config"]["queuedRunCoordinator"])},
        "compute_logs": {"module": "dagster_gcp.gcs.compute_log_manager", "class": "GCSComputeLogManager",
                         "config": _snake_keys(values["computeLogManager"]["config"]["gcsComputeLogManager"])},
        "concurrency": {"runs": {**_snake_keys({k: v for k, v in values["concurrency"]["runs"].items()
                                                 if k != "tagConcurrencyLimits"}),
                                 "tag_concurrency_limits": values["concurrency"]["runs"]["tagConcurrencyLimits"]},
                        "pools": _snake_keys(values["concurrency"]["pools"])},
        "run_monitoring": _snake_keys(daemon["runMonitoring"]),
        "run_retries": _snake_keys(daemon["runRetries"]),
        "telemetry": values["telemetry"],
    }


def test_instance_rendered_from_helm_values_is_valid_and_matches_production(tmp_path):
    rendered = render_instance(VALUES)
    _validate_instance(rendered, tmp_path)
    # Two descriptions of one deployment: they must not drift apart.
    assert rendered["run_coordinator"]["config"] == PRODUCTION["run_coordinator"].get("config", {})
    for section in ("compute_logs",):
        prod = PRODUCTION[section]["config"]
        for key, value in rendered[section]["config"].items():
            if key != "bucket":   # production reads the bucket from the environment
                assert prod[key] == value, f"{section}.{key}: helm {value!r} vs production {prod[key]!r}"
    assert rendered["concurrency"] == PRODUCTION["concurrency"]
    assert rendered["run_monitoring"] == PRODUCTION["run_monitoring"]
    assert rendered["run_retries"] == PRODUCTION["run_retries"]
    assert (rendered["storage"]["postgres"]["postgres_db"]["scheme"]
            == PRODUCTION["storage"]["postgres"]["postgres_db"]["scheme"])
    prod_launcher = PRODUCTION["run_launcher"]["config"]
    assert rendered["run_launcher"]["config"]["fail_pod_on_run_failure"] == prod_launcher["fail_pod_on_run_failure"]
    assert (rendered["run_launcher"]["config"]["run_k8s_config"]["container_config"]
            == prod_launcher["run_k8s_config"]["container_config"])
    assert "MARIN_ENV=production" in prod_launcher["env_vars"]
    shutil.rmtree(tmp_path, ignore_errors=True)
