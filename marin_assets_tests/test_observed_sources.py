"""Every partition of the platform's observable sources is observed on a real instance by materialize-all.

What the UI reads from this: the asset page's "Latest observation" and each partition's data version.
(The catalog's "% filled" counts materializations only, so it stays at 0% for a source: docs/ui.md.)
"""

import dagster as dg

from marin_assets.definitions import defs
from marin_assets.materialize_all import observe_sources

SOURCES = ("source_files", "training_run_spec", "task_set_spec")


def test_materialize_all_observes_every_partition_of_every_observable_source(tmp_path):
    observable = {a.key.to_user_string(): a for a in defs.assets if isinstance(a, dg.SourceAsset) and a.is_observable}
    assert set(SOURCES) <= set(observable)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        observe_sources(defs, instance)
        for name, source in observable.items():
            expected = source.partitions_def.get_partition_keys()
            records = instance.fetch_observations(dg.AssetKey(name), limit=1000).records
            observed = {r.partition_key: r.asset_observation.data_version for r in records}
            assert sorted(observed) == sorted(expected), name
            assert all(observed.values()), f"{name}: an observation without a data version"
            # what the asset page's "Latest observation" shows: a run launched through the observe job
            assert {instance.get_run_by_id(r.run_id).job_name for r in records} == {"marin_observe_sources"}
