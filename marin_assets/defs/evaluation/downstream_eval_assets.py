"""Dagster wiring of downstream evaluation: one partition per trained run x registered task set.

`task_set_spec` (observable source, one partition per task set) versions each registry entry (its
files' sha256 included), so editing a task set stales only its evaluations; the run's own asset
(training_run, scaling_run, heldout_run) versions the checkpoint; the code version covers the
evaluation code. So an evaluation re-materializes only when the checkpoint, the task set or the
evaluation code changes. The evaluation itself runs in a child process (evaluation.evaluate_run):
JAX, MaxText and the harness load there, not in the Dagster worker.
"""


import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable

import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.core.storage import Storage
from marin_assets.evaluation import evaluate_run, report
from marin_assets.evaluation.task_sets import TaskSetSpec, TaskSetsRegistry, task_set_verdict, verified_files
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train.hardware import LOCAL_PARTITIONS_METADATA

GROUP = "evaluation"
RUN, TASK_SET = "run", "task_set"
RESULT_FILE, PLOT_FILE = "result.json", "accuracy.png"


def task_set_source(registry: TaskSetsRegistry) -> dg.SourceAsset:
    partitions = dg.StaticPartitionsDefinition(registry.names)

    @dg.observable_source_asset(name="task_set_spec", partitions_def=partitions, group_name=GROUP,
                                description="Each task set's entry in recipes/task_sets.yaml (files' sha256 "
                                            "included); data version = its hash.")
    def task_set_spec(context) -> dg.DataVersionsByPartition:
        return dg.DataVersionsByPartition({s.name: hash_json(s.model_dump(mode="json")) for s in registry.task_sets})

    return task_set_spec


def run_checkpoint(result: dict, where: str) -> tuple[str, int]:
    """(run folder, checkpoint step) from a run's committed result.json (its `checkpoint_uri`)."""
    uri = result.get("checkpoint_uri")
    if not uri:
        raise ValueError(f"{where}: result.json names no checkpoint_uri (the run did not finish)")
    uri = uri.rstrip("/")
    return os.path.dirname(os.path.dirname(uri)), int(os.path.basename(uri))


def evaluate_in_child(run_dir: str, step: int, spec: TaskSetSpec, log) -> dict:
    """The evaluation's summary, computed by `python -m marin_assets.evaluation.evaluate_run` in a child process."""
    with tempfile.TemporaryDirectory(prefix="downstream-eval-") as out:
        spec_file = os.path.join(out, "task_set.json")
        with open(spec_file, "w") as f:
            f.write(spec.model_dump_json())
        command = [sys.executable, "-m", evaluate_run.__name__, run_dir, spec_file, out, "--step", str(step)]
        env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"), "HF_DATASETS_OFFLINE": "1",
               "HF_HUB_OFFLINE": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"downstream evaluation of {run_dir} on {spec.name} failed "
                               f"(exit {done.returncode}):\n{done.stderr[-3000:]}")
        log.info(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "evaluated")
        with open(os.path.join(out, evaluate_run.SUMMARY)) as f:
            return json.load(f)


def eval_metadata(summary: dict, png: bytes, plot_uri: str, result_uri: str) -> dict:
    """Summary first: the overall numbers, the table, the plot; then where the full result lives."""
    import base64

    overall = summary["overall"]
    return {
        "acc": dg.MetadataValue.float(round(overall["acc"], 4)),
        "centered_acc": dg.MetadataValue.float(round(overall["centered_acc"], 4)),
        "correct_prob_norm": dg.MetadataValue.float(round(overall["correct_prob_norm"], 4)),
        "bpb": dg.MetadataValue.float(round(overall["bpb"], 4)),
        "items": dg.MetadataValue.int(overall["items"]),
        "random_baseline": dg.MetadataValue.float(round(overall["random"], 4)),
        "summary": dg.MetadataValue.md(report.summary_table(summary)),
        "accuracy_plot": dg.MetadataValue.md(f"![accuracy](data:image/png;base64,{base64.b64encode(png).decode()})"),
        "accuracy_png": dg.MetadataValue.path(plot_uri),
        "result": dg.MetadataValue.path(result_uri),
        "checkpoint_step": dg.MetadataValue.int(summary["checkpoint_step"]),
        "eval_s": dg.MetadataValue.float(summary["eval_s"]),
    }


def local_partitions(registry: TaskSetsRegistry, run_keys: list[str] | None, local_runs: list[str] | None) -> list[str]:
    """The partitions `marin materialize-all` evaluates here: task sets marked auto_evaluate whose data folder
    exists on this machine (a fresh clone has no ../shared) x runs trained here; the rest on demand."""
    present = [s.name for s in registry.task_sets if s.auto_evaluate and os.path.isdir(s.data_dir)]
    if run_keys is None:
        return present
    runs = run_keys if local_runs is None else [r for r in run_keys if r in set(local_runs)]
    return [dg.MultiPartitionKey({RUN: r, TASK_SET: t}) for r in runs for t in present]


def build_eval_asset(name: str, registry: TaskSetsRegistry, task_sets: dg.SourceAsset, run_asset: str,
                     run_keys: list[str] | None, result_parts: Callable[[str | None], tuple[str, ...]],
                     out_parts: Callable[[str | None, str], tuple[str, ...]], description: str,
                     local_runs: list[str] | None = None) -> dg.AssetsDefinition:
    """Evaluation of `run_asset`'s runs (one per partition key in `run_keys`; None: the asset is unpartitioned)."""
    task_dim = dg.StaticPartitionsDefinition(registry.names)
    spec_dep_mapping = dg.IdentityPartitionMapping()
    if run_keys is None:
        partitions, run_dep = task_dim, dg.AssetDep(run_asset)
    else:
        partitions = dg.MultiPartitionsDefinition({RUN: dg.StaticPartitionsDefinition(run_keys), TASK_SET: task_dim})
        run_dep = dg.AssetDep(run_asset, partition_mapping=dg.MultiToSingleDimensionPartitionMapping(RUN))
        spec_dep_mapping = dg.MultiToSingleDimensionPartitionMapping(TASK_SET)

    @versioned(None)
    @dg.asset(name=name, partitions_def=partitions, group_name=GROUP, kinds={"python"},
              deps=[run_dep, dg.AssetDep(task_sets, partition_mapping=spec_dep_mapping)],
              metadata={LOCAL_PARTITIONS_METADATA: local_partitions(registry, run_keys, local_runs)},
              description=description)
    def downstream_eval(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st: Storage = storage.storage
        if run_keys is None:
            run_key, task_set = None, context.partition_key
        else:
            keys = context.partition_key.keys_by_dimension
            run_key, task_set = keys[RUN], keys[TASK_SET]
        spec = registry.get(task_set)
        verified_files(spec)  # before any model is loaded: a missing or changed file is named
        verdict = task_set_verdict(spec)
        if not verdict.cleared:
            raise ValueError(f"task set {task_set} is not cleared for use: {verdict.summary()}")
        st.require_committed(*result_parts(run_key))
        run_dir, step = run_checkpoint(st.read_json(*result_parts(run_key), RESULT_FILE), "/".join(result_parts(run_key)))
        summary = evaluate_in_child(run_dir, step, spec, context.log)
        summary["run"] = run_key or run_asset
        with st.atomic_dir(*out_parts(run_key, task_set)) as staged:
            staged.write_json(summary, RESULT_FILE)
            png = report.accuracy_plot_png(summary, f"{summary['run']} on {task_set}")
            staged.storage.fs.pipe_file(staged.join(PLOT_FILE), png)
            return record_output(
                context, staged, recipe=spec,
                output_hash=hash_json({k: summary[k] for k in ("overall", "categories", "tasks", "checkpoint_step")}),
                stats={"acc": summary["overall"]["acc"], "items": summary["overall"]["items"],
                       "license": spec.license, "compliance": verdict.summary()},
                extra_metadata=eval_metadata(summary, png, f"{staged.final_uri}/{PLOT_FILE}",
                                             f"{staged.final_uri}/{RESULT_FILE}"),
            )

    return downstream_eval
