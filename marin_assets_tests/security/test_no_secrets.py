"""No credential from the environment reaches metadata, event logs, compute logs or written files.

Real assets are materialized on a real on-disk instance with fake secrets in the environment; every
file under DAGSTER_HOME (SQLite run/event storage, compute logs) and under the storage root
(outputs, `_provenance.json`, plan.json, maxtext.yml) is then searched for the secret bytes.
A canary asset that logs a harmless environment value proves the search sees logs and metadata.
"""

import json
import os
import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._serdes import serialize_value

from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets_tests.stage_definitions import compliance, raw_corpus
from marin_assets.resources.environments import REPO_ROOT
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.run_folder import run_paths
from marin_assets.train.maxtext_config import maxtext_keys, write_maxtext_yaml
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.local_resources import local_resources

pytestmark = pytest.mark.slow

SECRETS = {
    "MARIN_TEST_SECRET": "sk-fake-marin-7f3a9c1e5b2d4f60a8e1",
    "AWS_SECRET_ACCESS_KEY": "fakeAwsSecret/K7MDENGbPxRfiCYzz9",
    "WANDB_API_KEY": "fakewandbkey0123456789abcdef0123456789abcd",
}
GCP_PRIVATE_KEY = "FAKEgcpPRIVATEkeyMATERIALnotArealKEY0123456789"
CANARY = "canary-value-3b1d"  # not a secret: proves the scan reads run logs and metadata
RUNS = TrainingRuns(runs={"tiny-secrets": {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 10},
                                           "resources": {"accelerator": "cpu", "memory_gib": 4}}})


@dg.asset
def canary(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    context.log.info(f"canary says {os.environ['MARIN_TEST_CANARY']}")
    return dg.MaterializeResult(metadata={"canary": os.environ["MARIN_TEST_CANARY"]})


def files_containing(root: Path, needle: str) -> list[str]:
    raw = needle.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and raw in p.read_bytes())


@pytest.fixture
def secret_env(tmp_path, monkeypatch):
    key_file = tmp_path / "gcp-key.json"
    key_file.write_text(json.dumps({
        "type": "service_account", "client_email": "fake@fake-project.iam.gserviceaccount.com",
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{GCP_PRIVATE_KEY}\n-----END PRIVATE KEY-----\n",
    }))
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    monkeypatch.setenv("MARIN_TEST_CANARY", CANARY)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO_ROOT / "deployments" / "local" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def test_secrets_in_the_environment_never_reach_metadata_logs_or_files(secret_env, tmp_path):
    home, root = secret_env, tmp_path / "storage"
    build_mixture(root)
    storage = local_resources(str(root))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        raw = dg.materialize([raw_corpus, compliance, canary], partition_key="debian_licenses",
                             resources=storage, instance=instance, selection=dg.AssetSelection.assets(raw_corpus))
        assert raw.success
        assert dg.materialize([canary], instance=instance).success
        train = build_defs(RUNS)
        mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
        plan = dg.materialize([train.get_assets_def("training_plan"), mixture], partition_key="tiny-secrets",
                              resources=storage, instance=instance, selection=["training_plan"])
        assert plan.success
        records = [serialize_value(e) for r in instance.get_runs() for e in instance.all_logs(r.run_id)]

    # The MaxText config the launcher writes for that run.
    spec = RUNS.spec("tiny-secrets")
    from marin_assets.tokenize.mixture_info import load_mixture_info

    keys = maxtext_keys(spec, load_mixture_info(Storage(str(root)), "tiny"), run_paths(Storage(str(root)), spec))
    write_maxtext_yaml(keys, root / "training" / "tiny-secrets" / "maxtext.yml")

    written = {p.name for p in root.rglob("*")}
    assert {MANIFEST_NAME, "inventory.json", "plan.json", "maxtext.yml"} <= written
    assert any(CANARY in r for r in records) and files_containing(home, CANARY)  # the scan can see
    for secret in [*SECRETS.values(), GCP_PRIVATE_KEY]:
        assert not [r for r in records if secret in r], f"secret in an event record: {secret}"
        assert files_containing(home, secret) == [], f"secret under DAGSTER_HOME: {secret}"
        assert files_containing(root, secret) == [], f"secret under the storage root: {secret}"
