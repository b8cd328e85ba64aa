"""Curation steps after the quality filters: a registry keyed by recipe section, run per document.

Each step is a small class (in its own pure module) with `name` and `apply(text) -> StepOutcome`; a
factory registered in STEPS (step_outcome.py, `@register_step`) builds it from the cleaning recipe,
the source and the shared inputs, or returns None when the recipe switches it off. Inputs too large to ship per task (eval-set n-gram indexes, the
classifier's bytes) arrive as handles with `.value` (Spark broadcasts in the job), read on the worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from marin_assets.data.curate.decontamination_step import DecontaminationStep
from marin_assets.data.clean.pii import PiiSettingsView, PiiStep
from marin_assets.data.curate.quality_classifier import QualityStep
from marin_assets.data.curate.step_outcome import STEPS, CurationStep, StepOutcome, register_step


@dataclass(frozen=True)
class CurationInputs:
    eval_index: Any = None  # .value: item_hits.EvalIndexes (per eval set: sorted n-gram hashes, items)
    quality_model: Any = None  # .value: fastText model bytes


# Run in this order: decontaminate the text as written, then redact, then score what will be kept.
@register_step("decontamination", position=10)
def _decontamination(recipe, source: str, inputs: CurationInputs):
    cfg = recipe.decontamination
    if not cfg.enabled or inputs.eval_index is None:
        return None
    return DecontaminationStep(inputs.eval_index, cfg.ngram, cfg.policy, cfg.min_remaining_fraction)


@register_step("pii", position=20)
def _pii(recipe, source: str, inputs: CurationInputs):
    cfg = recipe.pii
    if not cfg.enabled_for(source) or not cfg.replacements:
        return None
    return PiiStep(PiiSettingsView(dict(cfg.replacements), cfg.public_ips_only, cfg.phone_region))


@register_step("quality", position=30)
def _quality(recipe, source: str, inputs: CurationInputs):
    cfg = recipe.quality
    if not (cfg.score or cfg.filter) or inputs.quality_model is None:
        return None
    return QualityStep(inputs.quality_model, cfg.threshold if cfg.filter else None)


class Curation:
    def __init__(self, steps: list[CurationStep]):
        self.steps = steps

    def run(self, text: str) -> StepOutcome:
        """All steps in order; stops at the first rejection (its text is the text the step saw)."""
        total = StepOutcome(text)
        for step in self.steps:
            outcome = step.apply(total.text)
            for key, n in outcome.counts.items():
                total.counts[key] = total.counts.get(key, 0) + n
            total.fields.update(outcome.fields)
            if outcome.reject:
                total.reject = outcome.reject
                return total
            total.text = outcome.text
        return total


def build_curation(recipe, source: str, inputs: CurationInputs = CurationInputs()) -> Curation:
    factories = sorted(STEPS.values(), key=lambda factory: factory.position)
    return Curation([s for factory in factories if (s := factory(recipe, source, inputs)) is not None])
