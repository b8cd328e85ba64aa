"""The production instance storage (deployments/production/dagster.yaml) on a real PostgreSQL."""

from pathlib import Path

import dagster as dg
import yaml

from marin_assets_tests.postgres_server import postgres  # noqa: F401  (fixture)

PRODUCTION_YAML = Path(__file__).resolve().parents[2] / "deployments" / "production" / "dagster.yaml"


@dg.asset
def small_table() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": 3}, data_version=dg.DataVersion("c0ffee"))


def _home_with_production_storage(tmp_path: Path) -> str:
    production = yaml.safe_load(PRODUCTION_YAML.read_text())
    home = tmp_path / "dagster_home"
    home.mkdir()
    # Only the storage block: the run launcher and compute logs need a cluster and a bucket.
    (home / "dagster.yaml").write_text(yaml.safe_dump({"storage": production["storage"],
                                                        "telemetry": {"enabled": False}}))
    return str(home)


def test_materialization_round_trips_through_postgres(postgres, tmp_path, monkeypatch):
    for key, value in postgres.env().items():
        monkeypatch.setenv(key, value)
    home = _home_with_production_storage(tmp_path)

    with dg.DagsterInstance.from_config(home) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        result = dg.materialize([small_table], instance=instance)
        assert result.success

    # A fresh instance (another process in production) reads what the first one wrote.
    with dg.DagsterInstance.from_config(home) as instance:
        run = instance.get_run_by_id(result.run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        event = instance.get_latest_materialization_event(dg.AssetKey("small_table"))
        assert event.run_id == result.run_id
        assert event.asset_materialization.metadata["rows"] == dg.IntMetadataValue(3)
        assert event.asset_materialization.tags["dagster/data_version"] == "c0ffee"
