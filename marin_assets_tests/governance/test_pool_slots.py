"""materialize-all's wait for a pool slot: which pools a run needs, when a pool is full, one message."""

from pathlib import Path

import dagster as dg

from marin_assets.pool_slots import pool_is_full, pool_limit, pools_of, wait_for_pool_slots

LOCAL = Path(__file__).resolve().parents[2] / "deployments" / "local" / "dagster.yaml"


@dg.asset(pool="training")
def trains():
    return 1


@dg.asset
def cleans():
    return 1


def test_pools_of_names_the_pools_the_ops_declare():
    defs = dg.Definitions(assets=[trains, cleans])
    assert pools_of(defs, [trains.key]) == {"training"}
    assert pools_of(defs, [cleans.key]) == set()


def test_waits_sleeping_until_a_slot_is_free_and_says_so_once(tmp_path):
    (tmp_path / "dagster.yaml").write_text(LOCAL.read_text())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        storage = instance.event_log_storage
        assert pool_limit(instance, "training") == 1  # the shipped default_limit, before any slot is set
        assert not pool_is_full(instance, "training")
        storage.set_concurrency_slots("training", 1)
        assert storage.claim_concurrency_slot("training", "holder", "step", 0).is_claimed
        assert pool_is_full(instance, "training")
        said, sleeps = [], []

        def sleep(seconds):  # the holder finishes during the third wait
            sleeps.append(seconds)
            if len(sleeps) == 3:
                storage.free_concurrency_slots_for_run("holder")

        wait_for_pool_slots(instance, {"training"}, said.append, sleep=sleep)
        assert sleeps == [1.0, 1.0, 1.0]
        assert said == ["[marin] waiting for a slot of pool 'training' (1 slot(s), held by run(s) holder); "
                        "Ctrl-C or SIGTERM stops"]
        said.clear()
        wait_for_pool_slots(instance, {"training"}, said.append, sleep=sleep)  # free now: no wait, no line
        assert said == [] and len(sleeps) == 3
