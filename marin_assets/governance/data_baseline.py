"""Small-scale validation of the data: a validated source's or mixture's statistics against a committed baseline.

The nightly run compares its loss curve with a baseline (train/baseline.py); this compares the data
that fed it. A baseline is `recipes/data/baselines/{sources,mixtures}/<name>.json`:
{"statistics": {name: value}, "tolerances": {group: tolerance}}. A statistic's group is the part of
its name before ":"; each group is compared absolutely (shares, in [0, 1]) or relatively (lengths,
token counts). Every source and the mixture in recipes/nightly.yaml must have one; others may.
Regenerate after an intended change (then commit the file): `marin baseline refresh-data`.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.recipes import recipes_dir
from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaned_output import STATS_NAME
from marin_assets.tokenize.mixture_build import SPLITS
from marin_assets.tokenize.mixture_info import MIXTURE_FILE

DATA_BASELINES_DIR = "data/baselines"
SOURCES, MIXTURES = "sources", "mixtures"
QUANTILES = (0.1, 0.5, 0.9)
# group -> (how compared, default tolerance). Shares move by sampling noise only when the data or a
# rule changed; lengths and token counts are compared relatively.
GROUPS: dict[str, tuple[str, float]] = {
    "share": ("absolute", 0.05),           # kept / rejected / quarantined / ignored, of records read
    "rejected_share": ("absolute", 0.05),  # rejected by one rule, of records read
    "language_share": ("absolute", 0.05),  # kept documents labelled with one language
    "length_chars": ("relative", 0.25),    # quantiles of kept documents' text length
    "records_in": ("relative", 0.25),
    "tokens_share": ("absolute", 0.05),    # a source's share of the mixture's train tokens
    "tokens_per_document": ("relative", 0.25),
    "document_tokens": ("relative", 0.25),  # quantiles of tokens per train document: all, and per source
    "train_tokens": ("relative", 0.25),
}


class DataBaselineError(ValueError):
    pass


def source_statistics(stats: dict, lengths: list[int], languages: list[str]) -> dict[str, float]:
    """A cleaned source's statistics: stats.json counts, kept documents' text lengths and languages."""
    records = max(int(stats["records_in"]), 1)
    out: dict[str, float] = {"records_in": float(stats["records_in"])}
    for outcome in ("kept", "rejected", "quarantined", "ignored"):
        out[f"share:{outcome}"] = stats.get(outcome, 0) / records
    for rule, n in stats.get("rejected_by_rule", {}).items():
        out[f"rejected_share:{rule}"] = n / records
    out |= _quantiles("length_chars", lengths)
    for language, n in Counter(languages).items():
        out[f"language_share:{language}"] = n / max(len(languages), 1)
    return {name: round(value, 6) for name, value in sorted(out.items())}


def _quantiles(prefix: str, values) -> dict[str, float]:
    values = np.asarray(values, dtype=float)
    if not values.size:
        return {}
    return {f"{prefix}:p{round(q * 100)}": float(v) for q, v in zip(QUANTILES, np.quantile(values, QUANTILES))}


def mixture_statistics(sources: dict[str, dict], document_tokens: dict[str, np.ndarray] | None = None
                       ) -> dict[str, float]:
    """A mixture's statistics from its manifest's `sources` (train tokens and documents per source) and
    the token counts of its train documents per source (quantiles: all documents, and each source's)."""
    total = sum(int(s["train_tokens"]) for s in sources.values())
    out: dict[str, float] = {"train_tokens": float(total)}
    for name, info in sources.items():
        out[f"tokens_share:{name}"] = int(info["train_tokens"]) / max(total, 1)
        if info.get("train_documents"):
            out[f"tokens_per_document:{name}"] = int(info["train_tokens"]) / int(info["train_documents"])
    lengths = document_tokens or {}
    if lengths:
        out |= _quantiles("document_tokens", np.concatenate(list(lengths.values())))
    for name, values in lengths.items():
        out |= _quantiles(f"document_tokens:{name}", values)
    return {name: round(value, 6) for name, value in sorted(out.items())}


def cleaned_source_statistics(storage: Storage, source: str) -> dict[str, float]:
    """Statistics of cleaned/<source>: stats.json counts, kept texts' lengths and languages."""
    storage.require_committed(layout.CLEANED, source)
    stats = storage.read_json(layout.CLEANED, source, STATS_NAME)
    lengths: list[int] = []
    languages: list[str] = []
    for rel in storage.list_files(layout.CLEANED, source):
        if not (rel.startswith("documents/") and rel.endswith(".parquet")):
            continue
        with storage.fs.open(storage.committed_uri(layout.CLEANED, source, rel), "rb") as f:
            table = pq.read_table(f, columns=["text", "metadata"])
        lengths += [len(text or "") for text in table.column("text").to_pylist()]
        languages += [json.loads(m or "{}").get("language", "unknown") for m in table.column("metadata").to_pylist()]
    return source_statistics(stats, lengths, languages)


def mixture_document_tokens(storage: Storage, mixture: str) -> dict[str, np.ndarray]:
    """Tokens per train document of mixtures/<mixture>/train/*.parquet, by source (repeats included:
    the documents as training sees them)."""
    found: dict[str, list[np.ndarray]] = {}
    for rel in storage.list_files(layout.MIXTURES, mixture):
        if not (rel.startswith(f"{SPLITS[0]}/") and rel.endswith(".parquet")):
            continue
        with storage.fs.open(storage.committed_uri(layout.MIXTURES, mixture, rel), "rb") as f:
            table = pq.read_table(f, columns=["source", "tokens"])
        lengths = pc.list_value_length(table.column("tokens")).to_numpy(zero_copy_only=False)
        sources = np.asarray(table.column("source").to_pylist(), dtype=object)
        for source in sorted(set(sources)):
            found.setdefault(source, []).append(lengths[sources == source])
    return {source: np.concatenate(parts) for source, parts in sorted(found.items())}


def mixture_manifest_statistics(storage: Storage, mixture: str) -> dict[str, float]:
    """Statistics of mixtures/<mixture>: train tokens per source and per document, token-count quantiles."""
    storage.require_committed(layout.MIXTURES, mixture)
    manifest = storage.read_json(layout.MIXTURES, mixture, MIXTURE_FILE)
    return mixture_statistics(manifest["sources"], mixture_document_tokens(storage, mixture))


def group_of(statistic: str) -> str:
    """The tolerance group of a statistic: the part of its name before ":"."""
    group = statistic.split(":", 1)[0]
    if group not in GROUPS:
        raise DataBaselineError(f"statistic {statistic!r}: unknown group {group!r} (known: {sorted(GROUPS)})")
    return group


@dataclass(frozen=True)
class Drift:
    statistic: str
    baseline: float
    observed: float
    tolerance: float
    mode: str

    def line(self) -> str:
        return (f"{self.statistic}: baseline {self.baseline:g}, observed {self.observed:g}, "
                f"tolerance {self.tolerance:g} ({self.mode})")


def compare(observed: dict[str, float], baseline: dict) -> list[Drift]:
    """Every statistic outside its tolerance. A share absent on one side counts as 0 (a rule that
    stopped firing, a new language); an absent length or token count is a drift of its own."""
    tolerances = {g: float(baseline.get("tolerances", {}).get(g, default)) for g, (_, default) in GROUPS.items()}
    expected = baseline["statistics"]
    drifts = []
    for name in sorted(set(expected) | set(observed)):
        group = group_of(name)
        mode, tolerance = GROUPS[group][0], tolerances[group]
        if mode == "absolute":
            base, seen = float(expected.get(name, 0.0)), float(observed.get(name, 0.0))
            off = abs(seen - base) > tolerance
        else:
            base, seen = float(expected.get(name, math.nan)), float(observed.get(name, math.nan))
            off = not (abs(seen - base) <= tolerance * max(abs(base), 1e-12))  # nan (missing) is a drift
        if off:
            drifts.append(Drift(name, base, seen, tolerance, mode))
    return drifts


def baseline_path(kind: str, name: str, directory: Path | None = None) -> Path:
    return (directory or recipes_dir() / DATA_BASELINES_DIR) / kind / f"{name}.json"


def load_data_baseline(kind: str, name: str, directory: Path | None = None) -> dict | None:
    path = baseline_path(kind, name, directory)
    if not path.exists():
        return None
    try:
        baseline = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DataBaselineError(f"{path}: not JSON ({exc})") from None
    statistics = baseline.get("statistics") if isinstance(baseline, dict) else None
    if not isinstance(statistics, dict):
        raise DataBaselineError(f"{path}: field 'statistics' (an object of statistic -> value) is missing")
    for name, value in statistics.items():
        group_of(name)  # an unknown statistic is named
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise DataBaselineError(f"{path}: statistics.{name}: {value!r} is not a number")
    for group in baseline.get("tolerances", {}):
        if group not in GROUPS:
            raise DataBaselineError(f"{path}: tolerances: unknown group {group!r} (known: {sorted(GROUPS)})")
    return baseline


def write_data_baseline(kind: str, name: str, statistics: dict[str, float], directory: Path | None = None,
                        tolerances: dict[str, float] | None = None) -> Path:
    """Write (atomically) the baseline file; tolerances default to GROUPS' and keep a committed file's edits."""
    path = baseline_path(kind, name, directory)
    previous = load_data_baseline(kind, name, directory) or {}
    groups = {group_of(s) for s in statistics}
    kept = {g: t for g, t in previous.get("tolerances", {}).items()}
    chosen = {g: (tolerances or {}).get(g, kept.get(g, GROUPS[g][1])) for g in sorted(groups)}
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.tmp")
    staged.write_text(json.dumps({"tolerances": chosen, "statistics": statistics}, indent=1, sort_keys=True) + "\n")
    os.replace(staged, path)
    return path


@dataclass(frozen=True)
class DataVerdict:
    passed: bool
    message: str
    drifts: tuple[Drift, ...] = ()


def judge(kind: str, name: str, observed: dict[str, float], validated: bool,
          directory: Path | None = None) -> DataVerdict:
    """The blocking check's answer: drift (each statistic, baseline, observed, tolerance), a missing
    baseline of a validated source or mixture, or a pass."""
    path = baseline_path(kind, name, directory)
    baseline = load_data_baseline(kind, name, directory)
    if baseline is None:
        if validated:
            return DataVerdict(False, f"{name} is validated nightly (recipes/nightly.yaml) but has no data baseline: "
                                      f"{path} is missing; run `marin baseline refresh-data` and commit it")
        return DataVerdict(True, f"{name} is not validated nightly and has no data baseline ({path}); nothing compared")
    drifts = compare(observed, baseline)
    if drifts:
        lines = "\n".join(f"  - {d.line()}" for d in drifts)
        return DataVerdict(False, f"{name}: {len(drifts)} statistic(s) drifted from {path}:\n{lines}", tuple(drifts))
    return DataVerdict(True, f"{name}: {len(observed)} statistics within tolerance of {path}")
