"""Export one MaxText run folder's checkpoint to HF, check its logits, publish it: what every export asset does.

Shared by the training stage's `hf_export` (each training run's final checkpoint) and the scaling
stage's `scaling_hf_export` (the scaling runs recipes/hf_export.yaml names), so both write the same
folder (`<run folder>/hf/`), the same manifest and run the same blocking logits check.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import dagster as dg
import yaml

from marin_assets.core.storage import Storage
from marin_assets.lineage.recording import record_output
from marin_assets.train import checkpoint_model, hf_export, hf_llama_numpy, hf_mixtral_numpy, hf_push, hf_reference

HF_DIR = "hf"  # <run folder>/hf/


@dataclass(frozen=True)
class ExportSource:
    """A trained checkpoint to export: the MaxText run folder (storage parts) and the step its result names."""

    label: str                       # e.g. "training run tiny-sample", "scaling run cpu_suite/C1e11__d32l1"
    run_parts: tuple[str, ...]       # storage parts of the MaxText run folder (maxtext.yml, checkpoints/)
    checkpoint_uri: str
    checkpoint_step: int
    checkpoint_hash: str

    def manifest(self, keys: dict) -> dict:
        return {"checkpoint": self.checkpoint_uri, "checkpoint_step": self.checkpoint_step,
                "checkpoint_hash": self.checkpoint_hash, "architecture": keys.get("decoder_block", "llama2")}


@contextlib.contextmanager
def local_copy(storage: Storage, uri: str) -> Iterator[str]:
    """A local folder holding `uri` (itself when storage is local)."""
    if storage.is_local:
        yield uri
        return
    with tempfile.TemporaryDirectory() as folder:
        storage.fs.get(uri.rstrip("/") + "/", folder + "/", recursive=True)
        yield folder


def run_keys(st: Storage, source: ExportSource) -> dict:
    return yaml.safe_load(st.fs.cat(f"{st.uri(*source.run_parts)}/{checkpoint_model.CONFIG_FILE}"))


def load_model(st: Storage, source: ExportSource):
    """The checkpoint in MaxText, run as its exporter says HF runs it (an MoE: dropless)."""
    overrides = hf_export.exporter_for(run_keys(st, source)).forward_overrides
    return checkpoint_model.CheckpointModel.load(st.uri(*source.run_parts), step=source.checkpoint_step,
                                                 overrides=overrides)


def figures(folder: str, model, recipe) -> dict:
    rows = [[model.tokenizer.bos_id, *ids] for ids in model.tokenizer.encode(recipe.texts)]
    return hf_reference.compare_logits(folder, model.logits, rows, recipe.max_abs_diff, recipe.min_top1_agreement)


def export(context, st: Storage, source: ExportSource, recipe) -> dg.MaterializeResult:
    """Write `<run folder>/hf/` atomically with its manifest, then publish it once its logits match."""
    hf_push.check_push_settings(recipe.push)  # before any work: a push without credentials is refused
    model, keys = load_model(st, source), run_keys(st, source)
    with st.atomic_dir(*source.run_parts, HF_DIR) as staged:
        with tempfile.TemporaryDirectory() as folder:
            with local_copy(st, keys["tokenizer_path"]) as tokenizer_dir:
                files = hf_export.write_hf_folder(folder, keys, model.params, tokenizer_dir,
                                                  model.tokenizer.bos_id, model.tokenizer.eos_id)
            st.fs.put(folder + "/", staged.path.rstrip("/") + "/", recursive=True)
        made_from = source.manifest(keys)
        recorded = record_output(context, staged, recipe=recipe,
                                 manifest_extra={"export": made_from}, stats={"files": len(files), **made_from},
                                 extra_metadata={"hf_folder": dg.MetadataValue.path(staged.final_uri)})
    published = _publish(st, source, model, recipe)
    if not published:
        return recorded
    return dg.MaterializeResult(metadata={**recorded.metadata, "published": ", ".join(published)},
                                data_version=recorded.data_version)


def _publish(st: Storage, source: ExportSource, model, recipe) -> list[str]:
    if recipe.push.hub_repo is None and recipe.push.gcs_prefix is None:
        return []
    with local_copy(st, st.require_committed(*source.run_parts, HF_DIR)) as folder:
        found = figures(folder, model, recipe)
        if not found["passed"]:
            raise ValueError(f"{source.label}: not published, its logits do not match MaxText's: {found}")
        return hf_push.push_export(folder, recipe.push, f"marin_assets: export of {source.label}")


def check_result(st: Storage, source: ExportSource, recipe) -> dg.AssetCheckResult:
    """The blocking logits check of a committed export."""
    model = load_model(st, source)
    with local_copy(st, st.require_committed(*source.run_parts, HF_DIR)) as folder:
        found = figures(folder, model, recipe)
    return dg.AssetCheckResult(
        passed=bool(found["passed"]),
        description=(f"max |logit diff| {found['max_abs_diff']:.3g} (<= {recipe.max_abs_diff}), top-1 agreement "
                     f"{found['top1_agreement']:.4f} (>= {recipe.min_top1_agreement}) over {found['tokens']} tokens"),
        metadata={k: v for k, v in found.items() if k != "passed"} | {"figures": dg.MetadataValue.json(
            json.loads(json.dumps(found)))},
    )
