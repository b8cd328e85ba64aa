"""The nightly validation: the schedule's run requests, and the sensor that chains the stages."""

import datetime as dt

import dagster as dg
import pytest

from marin_assets.defs.governance.definitions import build_stage_defs as build_governance_defs
from marin_assets.governance.nightly import (
    NIGHT_TAG,
    STAGE_ASSETS,
    STAGE_TAG,
    load_nightly_plan,
    nightly_stages,
    stage_after,
    stage_complete,
)
from marin_assets.defs.governance.schedules import nightly_validation_chain, nightly_validation_schedule
from marin_assets_tests.local_resources import local_resources

PLAN = load_nightly_plan()
SOURCES = dg.StaticPartitionsDefinition(PLAN.sources)


def _stand_in(key: str, partitions_def):
    @dg.asset(name=key, partitions_def=partitions_def)
    def _asset() -> None:
        return None

    return _asset


# Same keys and partitioning as the stage assets (the stages own the real ones).
STAND_INS = [
    _stand_in("raw_corpus", SOURCES),
    _stand_in("cleaned_documents", SOURCES),
    _stand_in("tokenizer", None),
    _stand_in("tokenized_source", SOURCES),
    _stand_in("mixture", dg.StaticPartitionsDefinition([PLAN.mixture])),
    _stand_in("training_plan", dg.StaticPartitionsDefinition([PLAN.run])),
    _stand_in("training_run", dg.StaticPartitionsDefinition([PLAN.run])),
]


def _definitions() -> dg.Definitions:
    """The project's definitions, with stand-ins only for nightly assets no stage defines yet."""
    from marin_assets.definitions import defs as project

    graph = project.resolve_asset_graph()
    present = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).is_executable}
    missing = [a for a in STAND_INS if a.key.to_user_string() not in present]
    parts = [project, dg.Definitions(assets=missing)]
    if "audit_report" not in present:  # the lead has not wired governance in yet
        parts.append(build_governance_defs())
    return dg.Definitions.merge(*parts)


def test_every_nightly_asset_is_defined_by_a_stage():
    from marin_assets.definitions import defs as project

    graph = project.resolve_asset_graph()
    executable = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).is_executable}
    missing = [key for _, keys in STAGE_ASSETS for key in keys if key not in executable]
    assert not missing, f"the nightly validation selects assets no stage defines: {missing}"


def test_stage_order_and_completion_rules():
    stages = nightly_stages(PLAN)
    assert [s.job_name for s in stages] == [job for job, _ in STAGE_ASSETS]
    assert stages[0].partitions == tuple(PLAN.sources) and stages[-1].partitions == (PLAN.run,)
    assert stage_after(stages, "nightly_data_job").job_name == "nightly_tokenizer_job"
    assert stage_after(stages, "nightly_training_job") is None
    assert not stage_complete(stages[0], set(PLAN.sources[:-1]))
    assert stage_complete(stages[0], set(PLAN.sources) | {None})
    assert stage_complete(stages[1], {None})


def test_schedule_requests_the_data_stage_for_every_sample_source(tmp_path):
    defs = _definitions()
    for stage in nightly_stages(PLAN):  # each stage job resolves, and the plan names real partitions
        partitions_def = defs.resolve_job_def(stage.job_name).partitions_def
        for partition in stage.partitions:
            if partitions_def is None:
                assert partition is None, f"{stage.job_name} is unpartitioned, the plan names {partition!r}"
            else:
                assert partitions_def.has_partition_key(partition), f"{stage.job_name}: no partition {partition!r}"
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        context = dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=dt.datetime(2026, 12, 1, 3, 0, tzinfo=dt.UTC),
            repository_def=defs.get_repository_def(),
        )
        requests = nightly_validation_schedule.evaluate_tick(context).run_requests
    assert nightly_validation_schedule.cron_schedule == "0 3 * * *"
    assert nightly_validation_schedule.execution_timezone == "UTC"
    assert [r.partition_key for r in requests] == PLAN.sources
    assert {r.job_name for r in requests} == {"nightly_data_job"}
    assert {r.tags[NIGHT_TAG] for r in requests} == {"20261201T0300Z"}
    assert len({r.run_key for r in requests}) == len(PLAN.sources)


@pytest.mark.slow
def test_sensor_starts_the_next_stage_only_when_every_partition_succeeded(tmp_path):
    storage = dg.Definitions(resources=local_resources(str(tmp_path / "storage")))
    defs = dg.Definitions.merge(dg.Definitions(assets=STAND_INS), build_governance_defs(), storage)
    data_job = defs.resolve_job_def("nightly_data_job")
    tags = {NIGHT_TAG: "20261201T0300Z", STAGE_TAG: "nightly_data_job"}
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        def evaluate(result):
            context = dg.build_run_status_sensor_context(
                sensor_name="nightly_validation_chain", dagster_instance=instance,
                dagster_run=result.dagster_run, dagster_event=result.get_run_success_event(),
            )
            return nightly_validation_chain(context)

        results = [data_job.execute_in_process(instance=instance, partition_key=p, tags=tags) for p in PLAN.sources[:-1]]
        assert isinstance(evaluate(results[-1]), dg.SkipReason)  # the last source is still missing

        last = data_job.execute_in_process(instance=instance, partition_key=PLAN.sources[-1], tags=tags)
        [request] = evaluate(last)
        assert request.job_name == "nightly_tokenizer_job" and request.partition_key is None
        assert request.tags == {NIGHT_TAG: "20261201T0300Z", STAGE_TAG: "nightly_tokenizer_job"}

        outsider = data_job.execute_in_process(instance=instance, partition_key=PLAN.sources[0])
        assert isinstance(evaluate(outsider), dg.SkipReason)  # a manual run is not part of a night
