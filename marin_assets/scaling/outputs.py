"""Dagster-side helpers shared by the scaling assets: train-and-record one run, PNG metadata,
bootstrap samples back from storage, and the automation condition of the cheap fits."""

from __future__ import annotations

import datetime as dt

import dagster as dg
import pandas as pd

from marin_assets.core.hashing import hash_json
from marin_assets.core.storage import Storage
from marin_assets.data.sources.licenses import require_mixture_cleared
from marin_assets.lineage.recording import record_output
from marin_assets.scaling import plots, run_results
from marin_assets.scaling.bootstrap import laws_from_samples
from marin_assets.scaling.suite import ScalingRecipe, SuiteRun, training_spec
from marin_assets.train.bits_per_byte import run_evaluation
from marin_assets.train.launchers import launch, mixture_for
from marin_assets.train.report import domain_metadata, loss_plot_png, result_metadata

GROUP = "scaling"
# Cheap assets only: refit when any run lands, once nothing upstream is still running.
FIT_AUTOMATION = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
)


def png_metadata(png: bytes, path: str, title: str) -> dict:
    return {f"{title}": dg.MetadataValue.md(plots.markdown_image(png, title)),
            f"{title}_png": dg.MetadataValue.path(path)}


def write_png(staged, name: str, png: bytes) -> str:
    staged.storage.fs.pipe_file(staged.join(name), png)  # through fsspec: the suite may live on gs://
    return f"{staged.final_uri}/{name}"


def train_and_record(
    context, st: Storage, recipe: ScalingRecipe, run: SuiteRun, parts, tpu_launcher=None
):
    """Train one suite run with the training stage's launcher and commit its result.json."""
    spec = training_spec(recipe, run)
    require_mixture_cleared(st, f"{context.asset_key.to_user_string()}[{run.key}]", spec.mixture)
    mixture = mixture_for(st, spec)
    started_at = dt.datetime.now(dt.UTC).isoformat()
    trained = launch(context, spec, st, mixture, tpu_launcher)  # retried in-step if preempted
    payload = run_results.run_result(
        run, trained.final_eval_loss, vocab_size=spec.model.vocab_size_for(mixture.tokenizer_vocab_size),
        num_params=trained.num_params, flops_per_token=trained.flops_per_token,
        extra={"training_run": spec.run_name, "mixture": spec.mixture, "tokenizer_hash": mixture.tokenizer_hash,
               "checkpoint_uri": trained.checkpoint_uri, "checkpoint_hash": trained.checkpoint_hash,
               "started_at": started_at, "wall_s": trained.wall_s, "tokens_per_s": trained.tokens_per_s,
               **run_results.data_repetition(mixture.sources, run.D),
               **run_evaluation(trained, mixture),
               "domain_eval_error": trained.domain_eval_error, "domain_eval_s": trained.domain_eval_s,
               "efficiency": trained.efficiency},
    )
    with st.atomic_dir(*parts) as staged:
        staged.write_json(payload, run_results.RESULT_FILE)
        png = loss_plot_png(trained, f"{run.key}: N={run.N:,} D={run.D:,}")
        path = write_png(staged, "loss_curve.png", png)
        identity = {k: payload[k] for k in ("run", "N", "D", "C", "final_eval_loss", "status", "checkpoint_hash")}
        return record_output(
            context, staged, recipe=spec, output_hash=hash_json(identity),
            stats={**{k: payload[k] for k in ("N", "D", "C", "budget", "status", "flops_model", "epochs")},
                   "bpb": payload["metrics"].get("bpb") or "none"},
            extra_metadata={**result_metadata(trained, png, path),
                            **domain_metadata(staged, payload, payload["domain_eval_error"])},
        )


def bootstrap_laws(st: Storage, parts, report: dict | None = None) -> list:
    """The bootstrap's laws, of the form the report names (its fixed quantities, e.g. U, from the report)."""
    files = st.list_files(*parts)
    if "bootstrap.parquet" not in files:
        return []
    samples = pd.read_parquet(st.committed_uri(*parts, "bootstrap.parquet"))
    report = report or {}
    return laws_from_samples(samples, report.get("law", "chinchilla"), report)
