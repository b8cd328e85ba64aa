"""Seconds each slow test file took on the 2-core CI machine (setup + calls, serial run).

The suite runs on two pytest-xdist workers, one file per work unit (`--dist loadfile`); the conftest
hands out the files longest first, so two long files never end the run on one worker. Files not
listed are short and keep their collection order. Refresh from a run's `--durations=0` table when a
file's time changes a lot (the order only needs to be roughly right).
"""

FILE_SECONDS = {
    "marin_assets_tests/e2e/test_graph_e2e.py": 400,
    "marin_assets_tests/train/test_training_e2e.py": 155,  # 280 before bytecode + shared JAX cache (1034 -> 571 s on a loaded machine)
    "marin_assets_tests/cluster/test_cluster_outputs.py": 266,
    "marin_assets_tests/train/test_init_weights_e2e.py": 230,  # + HF export/import child; 336 s at load ~20 on the shared machine
    "marin_assets_tests/train/test_hf_export.py": 215,
    "marin_assets_tests/train_k8s/test_pod_preemption.py": 35,
    "marin_assets_tests/ui/test_ui_browser.py": 250,
    # 87 s in fresh-clone CI (unlisted, it ran in the run's tail); 47 s alone, 110 s at load 7-9
    "marin_assets_tests/ui/test_clean_stop.py": 80,
    "marin_assets_tests/train/test_preemption.py": 560,  # dense + MoE; estimated (dense 232 + MoE ~330), not measured on CI
    "marin_assets_tests/train/test_moe_training.py": 240,  # estimated from 286 s on a loaded machine, + MoE HF export (58 s loaded)
    "marin_assets_tests/train/test_dead_run_worker.py": 180,
    # measured on the shared 2-core machine under load (its files ran 2-3x their CI time there)
    "marin_assets_tests/train/test_dead_cli_run.py": 300,
    "marin_assets_tests/train/test_checkpoint_faults.py": 250,
    "marin_assets_tests/data/test_spark_disk_full.py": 40,
    "marin_assets_tests/scaling/test_profile_e2e.py": 112,
    "marin_assets_tests/train/test_efficiency_e2e.py": 95,
    "marin_assets_tests/benchmarks/test_gpu_check.py": 60,
    "marin_assets_tests/train/test_gpu_resources.py": 35,
    "marin_assets_tests/test_staleness.py": 170,
    "marin_assets_tests/deployments/test_dataproc_stub.py": 96,
    "marin_assets_tests/data/test_clean_assets.py": 63,
    "marin_assets_tests/test_toy_extensions.py": 25,  # a copy of the package + two interpreters (18 s at load ~9)
    "marin_assets_tests/scaling/test_scaling_run.py": 75,  # + the chosen run's HF export and logits check (estimated)
    "marin_assets_tests/scaling/test_comparison.py": 45,  # estimated: 125 s serial on a machine at load ~20
    "marin_assets_tests/security/test_bind_address.py": 37,
    "marin_assets_tests/fastpath/test_trainer_quiet.py": 36,
    "marin_assets_tests/tokenize/test_maxtext_training.py": 35,
    "marin_assets_tests/governance/test_waiting_cli.py": 29,
    "marin_assets_tests/scaling/test_external.py": 23,
    "marin_assets_tests/scaling/test_external_suite_options.py": 30,  # two materializations of a 43-row table (106 s at load 20)
    "marin_assets_tests/test_defaults_and_warnings.py": 22,
    "marin_assets_tests/data/test_curation_job.py": 19,
    "marin_assets_tests/data/test_global_dedup.py": 18,
    "marin_assets_tests/data/test_cleaning_job.py": 18,
    "marin_assets_tests/resources/test_run_coordinator.py": 30,  # a gRPC code server; measured under load
    "marin_assets_tests/core/test_no_recipe_at_import.py": 15,  # one interpreter importing every module (9 s loaded)
    "marin_assets_tests/data/test_cleaning_values.py": 25,  # one Spark cleaning of dirty_web (60 s at load 14)
}


def file_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def longest_files_first(nodeids: list[str], seconds: dict[str, float] = FILE_SECONDS) -> list[str]:
    """Files by their seconds, longest first; unlisted files after, in their order; a file's tests
    stay together and in their order (a stable sort)."""
    first_seen: dict[str, int] = {}
    for nodeid in nodeids:
        first_seen.setdefault(file_of(nodeid), len(first_seen))
    return sorted(nodeids, key=lambda n: (-seconds.get(file_of(n), 0), first_seen[file_of(n)]))
