"""The weights registry (recipes/weights.yaml): checkpoints a run may start from, cleared like sources.

An entry names a run of this platform (`format: run`, `uri: <run name>`: its final checkpoint), a
MaxText checkpoint step folder on local disk or gs:// (`format: maxtext`), or a Hugging Face folder
(`format: hf`: config.json + safetensors, converted once per checksum into a MaxText checkpoint
under weights/<name>/, train/hf_import.py), with its license and provenance. `weights_verdict` is
the sources' compliance decision (data/compliance.py) applied to the checkpoint's files: the
license allowlist, the required provenance fields and the checksum. A run of this platform is also
refused when any source behind it is not cleared. `prepared_weights` gives MaxText's
`load_parameters_path` (converting an HF folder first) and what the child run's provenance records.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import ClassVar, Literal

import fsspec
from pydantic import Field, field_validator

from marin_assets.core import layout
from marin_assets.core.hashing import combine_hashes
from marin_assets.core.recipes import NamedRegistry, Recipe, load_recipe, recipes_dir
from marin_assets.core.storage import MANIFEST_NAME, Storage, StorageError, file_hashes
from marin_assets.data.sources.compliance import ComplianceProblem, ComplianceVerdict, compliance_verdict, load_policy
from marin_assets.data.sources.licenses import uncleared_sources
from marin_assets.data.sources.source_registry import Provenance, resolve_uri
from marin_assets.train.run_result import RESULT_FILE

WEIGHTS_RECIPE = "weights.yaml"


class WeightsNotClearedError(RuntimeError):
    """Raised before launch when a run's init weights are unknown, uncleared or do not match their checksum."""


class WeightsSpec(Recipe):
    name: str
    format: Literal["run", "maxtext", "hf"] = Field(
        description="run: a training run of this platform (uri = its run name); maxtext: a MaxText checkpoint "
        "step folder (local path or gs://, holding items/); hf: a Hugging Face folder (config.json + "
        "*.safetensors, Llama or Mixtral), converted into a MaxText checkpoint before the run starts")
    uri: str
    license: str = Field(description="SPDX id of the weights' license; must be in compliance.yaml's allowlist")
    provenance: Provenance | None = None
    description: str = ""

    @field_validator("name")
    @classmethod
    def _folder_safe(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_\-.]*", value):
            raise ValueError("must be lowercase letters, digits, '_', '-' or '.'")
        return value


class WeightsRegistry(NamedRegistry):
    entries_field: ClassVar[str] = "weights"
    kind: ClassVar[str] = "weights entry"
    weights: list[WeightsSpec] = Field(default_factory=list)


@cache
def load_weights(path: str = WEIGHTS_RECIPE) -> WeightsRegistry:
    full = recipes_dir() / path
    if not full.exists():
        return WeightsRegistry()
    registry = load_recipe(full, WeightsRegistry)
    resolved = [w if w.format == "run" else w.model_copy(update={"uri": resolve_uri(w.uri, full)})
                for w in registry.weights]
    return registry.model_copy(update={"weights": resolved})


@dataclass(frozen=True)
class ResolvedWeights:
    name: str
    checkpoint_dir: str           # the step folder (<...>/checkpoints/<step>)
    checksum: str                 # what provenance.checksum must equal
    parent_run: str | None = None
    parent_output: str | None = None  # the parent run's committed final/ (its manifest: the audit walks on)
    sources: list[str] = field(default_factory=list)
    hf_folder: str | None = None  # format hf: the folder checkpoint_dir was converted from

    @property
    def load_parameters_path(self) -> str:
        return f"{self.checkpoint_dir.rstrip('/')}/items"

    def record(self) -> dict:
        """What the child run's manifest records about where its weights came from."""
        return {"weights": self.name, "checkpoint": self.checkpoint_dir, "checksum": self.checksum,
                "parent_run": self.parent_run, "parent_output": self.parent_output, "sources": self.sources,
                **({"hf_folder": self.hf_folder} if self.hf_folder else {})}


def checkpoint_inventory(checkpoint_dir: str) -> dict:
    """Files of a MaxText checkpoint step folder and their combined hash (the checksum to register)."""
    fs, path = fsspec.core.url_to_fs(checkpoint_dir)
    if not fs.isdir(path):
        return {"files": [], "content_hash": None}
    names = sorted(posixpath.relpath(p, path) for p in fs.find(path))
    hashes = file_hashes(checkpoint_dir, names)
    return {"files": [{"path": n, "sha256": h} for n, h in hashes], "content_hash": combine_hashes(hashes)}


def _run_parent(storage: Storage, spec: WeightsSpec) -> tuple[ResolvedWeights | None, dict | None]:
    """The final checkpoint of a platform run, as its committed result.json records it."""
    if not storage.is_committed(layout.TRAINING, spec.uri, layout.FINAL_DIR):
        return None, None
    final = storage.committed_uri(layout.TRAINING, spec.uri, layout.FINAL_DIR)
    with storage.fs.open(f"{final}/{RESULT_FILE}", "r") as f:
        result = json.load(f)
    with storage.fs.open(f"{final}/{MANIFEST_NAME}", "r") as f:
        sources = sorted(json.load(f).get("licenses", {}))
    resolved = ResolvedWeights(spec.name, result["checkpoint_uri"], result["checkpoint_hash"], spec.uri, final, sources)
    # The checkpoint hash is the parent's data version; the checksum is what the registry pins.
    return resolved, {"files": [{"path": result["checkpoint_uri"]}], "content_hash": result["checkpoint_hash"]}


def weights_verdict(storage: Storage, name: str, registry: WeightsRegistry | None = None
                    ) -> tuple[ComplianceVerdict, ResolvedWeights | None]:
    """The compliance decision for a weights entry, and where its checkpoint is when it exists."""
    registry = registry or load_weights()
    if name not in registry.names:
        return ComplianceVerdict(name, (ComplianceProblem(
            "unknown_source", f"weights {name!r} are not in the weights registry "
            f"({recipes_dir() / WEIGHTS_RECIPE}); known: {registry.names}"),)), None
    spec = registry.get(name)
    if spec.format == "run":
        resolved, inventory = _run_parent(storage, spec)
        if inventory is None:
            return ComplianceVerdict(name, (ComplianceProblem(
                "no_inventory", f"weights {name!r}: training run {spec.uri!r} has no committed final checkpoint; "
                "materialize training_run for it first"),)), None
    else:
        inventory = checkpoint_inventory(spec.uri)
        resolved = ResolvedWeights(name, spec.uri, inventory["content_hash"] or "",
                                   hf_folder=spec.uri if spec.format == "hf" else None)
    verdict = compliance_verdict(name, spec, inventory, load_policy())
    if resolved is not None and resolved.sources:  # the chain: every source behind the parent run
        blocked = uncleared_sources(storage, resolved.sources)
        verdict = ComplianceVerdict(name, verdict.problems + tuple(ComplianceProblem(
            "source_not_cleared", f"source {source!r} behind run {spec.uri!r} is not cleared: {'; '.join(why)}",
            {"source": source}) for source, why in blocked.items()))
    return verdict, resolved


def assert_weights_cleared(storage: Storage, name: str) -> ResolvedWeights:
    """The resolved weights of a cleared entry; else WeightsNotClearedError naming the entry and each reason."""
    try:
        verdict, resolved = weights_verdict(storage, name)
    except (OSError, StorageError, KeyError, json.JSONDecodeError) as exc:
        raise WeightsNotClearedError(f"weights {name!r}: cannot read the checkpoint: {exc}") from exc
    if not verdict.cleared or resolved is None:
        reasons = "\n".join(f"  - {m}" for m in verdict.messages)
        raise WeightsNotClearedError(
            f"refusing to train from weights {name!r} ({recipes_dir() / WEIGHTS_RECIPE}):\n{reasons}")
    return resolved


def weights_recipe_path() -> Path:
    return recipes_dir() / WEIGHTS_RECIPE


def prepared_weights(storage: Storage, name: str, fits=None) -> ResolvedWeights:
    """A cleared entry's MaxText checkpoint; a `format: hf` folder is first checked by `fits(config)`
    (a list of problems, each naming a config.json field) and converted (train/hf_import.py)."""
    resolved = assert_weights_cleared(storage, name)
    if resolved.hf_folder is None:
        return resolved
    from marin_assets.train.hf_import import imported_checkpoint, read_hf_config

    problems = fits(read_hf_config(resolved.hf_folder)) if fits else []
    if problems:
        reasons = "\n".join(f"  - {p}" for p in problems)
        raise WeightsNotClearedError(f"refusing to train from weights {name!r}: the HF folder does not fit the "
                                     f"run's model:\n{reasons}")
    return imported_checkpoint(storage, resolved)
