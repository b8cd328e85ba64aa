"""The export's logits check: an HF folder scored by the numpy reference of its model_type vs MaxText's forward pass.

References (independent of MaxText and JAX) by config.json's `model_type`: `llama`
(train/hf_llama_numpy.py) and `mixtral` (train/hf_mixtral_numpy.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from marin_assets.train.hf_llama_numpy import HfLlama
from marin_assets.train.hf_mixtral_numpy import HfMixtral

REFERENCES: dict[str, type[HfLlama]] = {cls.MODEL_TYPE: cls for cls in (HfLlama, HfMixtral)}


def load_reference(folder: str | Path) -> HfLlama:
    """The numpy model for an exported folder, picked by its config.json's model_type."""
    config = json.loads((Path(folder) / "config.json").read_text())
    model_type = config.get("model_type")
    if model_type not in REFERENCES:
        raise ValueError(f"{folder}/config.json: model_type {model_type!r} has no numpy reference; "
                         f"known: {sorted(REFERENCES)}")
    return REFERENCES[model_type].load(folder)


def compare_logits(hf_folder: str, maxtext_logits: Callable[[np.ndarray], np.ndarray], rows: list[list[int]],
                   max_abs_diff: float, min_top1_agreement: float) -> dict:
    """The reference vs MaxText's forward pass on the same token rows.

    `maxtext_logits` maps int32 (1, seq) tokens to (1, seq, vocab) logits (CheckpointModel.logits).
    Returns the figures and whether both are within the tolerances.
    """
    reference = load_reference(hf_folder)
    diffs, agree, total = [], 0, 0
    for row in rows:
        ours = reference.logits(row)
        theirs = np.asarray(maxtext_logits(np.asarray([row], dtype=np.int32))[0], dtype=np.float64)
        diffs.append(float(np.max(np.abs(ours - theirs))))
        agree += int(np.sum(ours.argmax(-1) == theirs.argmax(-1)))
        total += len(row)
    figures = {"max_abs_diff": max(diffs), "top1_agreement": agree / total, "tokens": total,
               "tolerance_max_abs_diff": max_abs_diff, "tolerance_top1_agreement": min_top1_agreement}
    figures["passed"] = figures["max_abs_diff"] <= max_abs_diff and figures["top1_agreement"] >= min_top1_agreement
    return figures
