"""What a finished training run shows: result files, a loss-curve plot, and Dagster metadata values.

The result files go to the run's final folder through the storage's filesystem, and the run's
MaxText config is read from its run folder by URI, so both may be local or on gs:// (TPU runs).
"""

from __future__ import annotations

import base64
import io

import dagster as dg
import fsspec

from marin_assets.core.line_preview import line_preview_markdown, preview_key
from marin_assets.core.plotting import pyplot
from marin_assets.core.storage import StagedOutput
from marin_assets.core.metadata_tables import metadata_table, round_sig
from marin_assets.train import domain_report, routing_report
from marin_assets.train.run_result import RESULT_FILE, TrainingResult
from marin_assets.train.preflight import ProfileEstimate
from marin_assets.train.wandb_tracking import describe, wandb_settings

PLOT_FILE, CONFIG_FILE = "loss_curve.png", "maxtext.yml"
DOMAIN_PLOT_FILE = "domain_bpb.png"
ROUTING_PLOT_FILE = "routing_heatmap.png"


def write_result_files(staged: StagedOutput, result: TrainingResult, title: str,
                       evaluation: dict | None = None) -> bytes:
    """result.json (with the per-domain `evaluation`: metrics, domains, validation_text), the loss plot
    and the MaxText config the run used, into `staged`; returns the PNG."""
    fs = staged.storage.fs
    staged.write_json({**result.to_json(), **(evaluation or {})}, RESULT_FILE)
    png = loss_plot_png(result, title)
    fs.pipe_file(staged.join(PLOT_FILE), png)
    with fsspec.open(result.maxtext_config_path, "rb") as f:
        fs.pipe_file(staged.join(CONFIG_FILE), f.read())
    return png


def loss_plot_png(result: TrainingResult, title: str) -> bytes:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    if result.loss_curve:
        ax.plot(*zip(*result.loss_curve), label="train loss")
    if result.eval_curve:
        ax.plot(*zip(*result.eval_curve), "o-", label="eval loss (validation split)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats/token)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    if result.moe_lb_loss_curve:  # MoE: the load-balancing loss on its own scale
        lb = ax.twinx()
        lb.plot(*zip(*result.moe_lb_loss_curve), color="tab:red", alpha=0.7, label="MoE load-balance loss")
        lb.set_ylabel("load-balance loss")
        lb.legend(loc="center right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def result_metadata(result: TrainingResult, plot_png: bytes, plot_path: str) -> dict:
    """The numbers first, then the plot; the curves themselves are in result.json (a file link), not inline."""
    image = base64.b64encode(plot_png).decode()
    final_dir = plot_path.rsplit("/", 1)[0]
    return {
        **efficiency_metadata(result.efficiency),
        "final_eval_loss": dg.MetadataValue.float(round(result.final_eval_loss, 4)),
        "tokens_per_s": dg.MetadataValue.float(round(result.tokens_per_s or 0.0, 1)),
        "tflops_per_device": dg.MetadataValue.float(round(result.tflops_per_device or 0.0, 4)),
        "num_params": dg.MetadataValue.int(result.num_params),
        "checkpoint_step": dg.MetadataValue.int(result.checkpoint_step),
        "wall_s": dg.MetadataValue.float(round(result.wall_s, 2)),
        "loss_curve_plot": dg.MetadataValue.md(f"![loss curve](data:image/png;base64,{image})"),
        **loss_preview(result),
        "loss_curve_png": dg.MetadataValue.path(plot_path),
        "curves": dg.MetadataValue.path(f"{final_dir}/{RESULT_FILE}"),  # train and eval curves, every step
        "eval_tokens": dg.MetadataValue.int(int(result.eval_tokens)),
        "flops_per_token": dg.MetadataValue.float(round_sig(float(result.flops_per_token), 4)),
        "checkpoint_uri": dg.MetadataValue.path(result.checkpoint_uri),
        "checkpoint_hash": dg.MetadataValue.text(result.checkpoint_hash),
        "tensorboard_dir": dg.MetadataValue.path(result.tensorboard_dir),
        "maxtext_config": dg.MetadataValue.path(result.maxtext_config_path),
        "resumed_from_step": dg.MetadataValue.text(str(result.resumed_from_step)),
        **({"damaged_checkpoints_set_aside": dg.MetadataValue.json(result.damaged_checkpoints)}
           if result.damaged_checkpoints else {}),
        "architecture": dg.MetadataValue.json(result.architecture),
        "quantization": dg.MetadataValue.text(result.quantization),
        "active_params": dg.MetadataValue.int(result.active_params or result.num_params),
        **moe_metadata(result),
        **wandb_metadata(result.wandb),
    }


def loss_preview(result: TrainingResult) -> dict:
    """The loss curve drawn legibly at the size the UI shows inline (core/line_preview.py), if it fits."""
    markdown = line_preview_markdown([result.loss_curve or []], [result.eval_curve or []], "loss", "steps",
                                     caption="line: train loss, squares: eval loss",
                                     alt="loss curve preview")
    return {preview_key("loss_curve_plot"): dg.MetadataValue.md(markdown)} if markdown else {}


def moe_metadata(result: TrainingResult) -> dict:
    """An MoE run's load-balancing loss (first, last); the whole curve is in result.json and the loss plot."""
    if not result.moe_lb_loss_curve:
        return {}
    first, last = result.moe_lb_loss_curve[0][1], result.moe_lb_loss_curve[-1][1]
    return {"moe_lb_loss_first": dg.MetadataValue.float(round(first, 6)),
            "moe_lb_loss_last": dg.MetadataValue.float(round(last, 6))}


def efficiency_summary_line(eff: dict) -> str:
    """One line a researcher reads first: MFU, goodput, tokens/s, memory measured vs estimated."""
    def pct(v):
        return f"{v:.1%}" if isinstance(v, (int, float)) else "n/a"

    memory = eff.get("memory") or {}
    measured, estimate = memory.get("measured_bytes"), memory.get("estimate_bytes")
    mem = (f"{measured / 1024**3:.2f} GiB measured vs {estimate / 1024**3:.2f} GiB estimated"
           if measured and estimate else "memory not measured")
    return (f"MFU {pct(eff.get('mfu'))} (peak {eff.get('peak_tflops') or 0:.3g} TFLOP/s per {eff.get('peak_per')}), "
            f"goodput {pct(eff.get('goodput'))}, {eff.get('tokens_per_s') or 0:.0f} tokens/s, {mem}")


def efficiency_metadata(eff: dict) -> dict:
    if not eff:
        return {}
    memory = eff.get("memory") or {}
    bad = eff.get("badput_s") or {}
    return {
        "mfu": dg.MetadataValue.float(round(eff["mfu"], 4) if eff.get("mfu") is not None else float("nan")),
        "goodput": dg.MetadataValue.float(round(eff["goodput"], 4) if eff.get("goodput") is not None else float("nan")),
        "badput_s": dg.MetadataValue.json(bad),
        "peak_memory_gib": dg.MetadataValue.float(round((memory.get("measured_bytes") or 0) / 1024**3, 4)),
        "memory_estimate_gib": dg.MetadataValue.float(round((memory.get("estimate_bytes") or 0) / 1024**3, 4)),
        "peak_tflops_source": dg.MetadataValue.text(eff.get("peak_source") or "none"),
    }


def domain_metadata(staged: StagedOutput, evaluation: dict, error: str | None) -> dict:
    """Per-domain tokens, bytes, loss and bpb as a table, and the bpb bars (record_output shows their
    inline preview first). result.json keeps the unrounded numbers."""
    rows = evaluation.get("domains") or []
    meta = {
        "domains": metadata_table(domain_report.table_rows(rows), columns=domain_report.COLUMNS),
        "domain_eval_error": dg.MetadataValue.text(error or "none"),
        "eval_sets_missing": dg.MetadataValue.text(
            domain_report.missing_summary(evaluation.get("eval_sets_missing") or {})),
    }
    png = domain_report.bpb_plot_png(rows)
    if png is not None:
        staged.storage.fs.pipe_file(staged.join(DOMAIN_PLOT_FILE), png)
        image = base64.b64encode(png).decode()
        meta["domain_bpb_plot"] = dg.MetadataValue.md(f"![bpb by domain](data:image/png;base64,{image})")
        meta["domain_bpb_png"] = dg.MetadataValue.path(f"{staged.final_uri}/{DOMAIN_PLOT_FILE}")
    return meta


def routing_metadata(staged: StagedOutput, result: TrainingResult) -> dict:
    """An MoE run's expert shares per layer (table + heat map) and dropped fraction; {} for a dense run."""
    if not result.architecture.get("num_experts"):
        return {}
    if not result.routing:
        return {"routing_error": dg.MetadataValue.text(result.routing_error or "no routing statistics")}
    meta = {
        "routing": metadata_table(routing_report.table_rows(result.routing)),
        "routing_max_expert_share": dg.MetadataValue.float(round(result.routing["max_share"], 4)),
        "dropped_token_fraction": dg.MetadataValue.float(
            round(max(layer["dropped_fraction"] for layer in result.routing["layers"]), 4)),
    }
    png = routing_report.heatmap_png(result.routing)
    staged.storage.fs.pipe_file(staged.join(ROUTING_PLOT_FILE), png)
    image = base64.b64encode(png).decode()
    meta["routing_heatmap"] = dg.MetadataValue.md(f"![expert shares](data:image/png;base64,{image})")
    meta["routing_heatmap_png"] = dg.MetadataValue.path(f"{staged.final_uri}/{ROUTING_PLOT_FILE}")
    return meta


def wandb_metadata(run: dict | None) -> dict:
    meta = {"wandb": dg.MetadataValue.text(describe(run, wandb_settings()))}
    if run and run.get("url"):
        meta["wandb"] = dg.MetadataValue.url(run["url"])
    if run and run.get("dir"):
        meta["wandb_dir"] = dg.MetadataValue.path(run["dir"])
    return meta


def preflight_metadata(plan: dict, profile: ProfileEstimate | None) -> dict:
    report = plan["preflight"]
    memory = report.get("memory") or {}
    meta = {
        "num_params": dg.MetadataValue.int(report["num_params"]),
        "active_params": dg.MetadataValue.int(report.get("active_params", report["num_params"])),
        "steps": dg.MetadataValue.int(report["steps"]),
        "num_devices": dg.MetadataValue.int(report["num_devices"]),
        "per_device_batch_size": dg.MetadataValue.float(report["per_device_batch_size"]),
        "flops_per_token": dg.MetadataValue.float(round_sig(float(report["flops_per_token"]), 4)),
        "flops_per_step": dg.MetadataValue.float(round_sig(float(report["flops_per_step"]), 4)),
        "total_flops": dg.MetadataValue.float(round_sig(float(report["total_flops"]), 4)),
        "memory_per_device_gib": dg.MetadataValue.float(round(memory.get("total_bytes", 0) / 1024**3, 4)),
        "memory_available_gib": dg.MetadataValue.text(
            f"{memory['available_bytes'] / 1024**3:.2f}" if memory.get("available_bytes") else "unknown"
        ),
        "preflight_problems": dg.MetadataValue.text("; ".join(report["problems"]) or "none"),
    }
    if profile is not None:
        meta.update({
            "profile_steps": dg.MetadataValue.int(profile.measured_steps),
            "profile_median_step_s": dg.MetadataValue.float(profile.median_step_s),
            "estimated_wall_hours": dg.MetadataValue.float(round(profile.estimated_wall_s / 3600, 4)),
            "estimated_chip_hours": dg.MetadataValue.float(round(profile.estimated_chip_hours, 4)),
        })
    return meta
