"""Recipe edits tests make in a temporary copy of the recipes."""

from __future__ import annotations

from pathlib import Path

import yaml


def without_trained_curation(cleaning_yaml: Path) -> None:
    """Switch off the curation steps that need other assets first (eval_set for decontamination,
    quality_classifier for scoring), for tests about something else that materialize cleaning alone."""
    recipe = yaml.safe_load(cleaning_yaml.read_text())
    recipe["decontamination"]["enabled"] = False
    recipe["quality"]["score"] = False
    recipe["quality"]["filter"] = False
    cleaning_yaml.write_text(yaml.safe_dump(recipe, sort_keys=False))
