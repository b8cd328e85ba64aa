"""The recipe values a cleaning job carries from the orchestrator to the Spark driver, with their hashes.

The orchestrator reads cleaning.yaml, sources.yaml and eval_sets.yaml once, when it plans the job, and
ships what it read as plain JSON values plus a hash per field (each recipe section, each source spec,
the eval-set names; `recipe_hash` is the hash the provenance manifest records). The driver (in this
process or on a cluster) re-checks every hash before it cleans and refuses a value that changed on the
way, naming the field; it never reads a recipe file, and its workers get the validated models in the
job's closure. So a recipe edited on disk after the job was planned cannot change what the job applies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from marin_assets.core.hashing import canonical_json, hash_json
from marin_assets.core.recipes import RecipeError
from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.sources.source_registry import SourceSpec

RECIPE_FIELD = "recipe"  # the whole recipe's hash, as the provenance manifest's recipe_hash


class ValueSkew(RecipeError):
    """A value the driver received does not hash to what the orchestrator recorded when it planned the job."""


def field_hashes(recipe: dict, specs: list[dict], eval_sets: list[str]) -> dict[str, str]:
    """{field: hash of its value}: the whole recipe, each of its sections, each source spec, the eval-set names."""
    hashes = {RECIPE_FIELD: hash_json(recipe)}
    hashes.update({f"recipe.{section}": hash_json(value) for section, value in recipe.items()})
    hashes.update({f"sources.{spec['name']}": hash_json(spec) for spec in specs})
    hashes["eval_sets"] = hash_json(eval_sets)
    return hashes


@dataclass(frozen=True)
class CleaningValues:
    recipe: dict  # CleaningRecipe.model_dump(mode="json")
    specs: list[dict]  # the job's source then its dedup peers, each SourceSpec.model_dump(mode="json")
    eval_sets: list[str]  # the registered eval sets whose indexes decontamination reads
    hashes: dict[str, str] = field(default_factory=dict)  # recorded by the orchestrator (field_hashes)

    @classmethod
    def planned(cls, recipe: CleaningRecipe, specs: list[SourceSpec], eval_sets: list[str]) -> CleaningValues:
        """The orchestrator's values and their hashes, taken from the models it planned the job with."""
        recipe_json = recipe.model_dump(mode="json")
        specs_json = [spec.model_dump(mode="json") for spec in specs]
        return cls(recipe_json, specs_json, list(eval_sets), field_hashes(recipe_json, specs_json, list(eval_sets)))

    @property
    def recipe_hash(self) -> str:
        return self.hashes[RECIPE_FIELD]

    def checked(self) -> tuple[CleaningRecipe, list[SourceSpec]]:
        """The driver's models, after every value's hash matched the recorded one (else ValueSkew naming it)."""
        found = field_hashes(self.recipe, self.specs, self.eval_sets)
        changed = sorted(name for name in found.keys() | self.hashes.keys() if found.get(name) != self.hashes.get(name))
        if changed:  # name the sections that changed, not only the whole recipe's hash
            named = [name for name in changed if name != RECIPE_FIELD] or changed
            raise ValueSkew(f"cleaning job values changed after planning: {named} no longer hash to what the "
                            f"orchestrator recorded; the driver refuses to clean with them")
        try:
            return CleaningRecipe.model_validate(self.recipe), [SourceSpec.model_validate(s) for s in self.specs]
        except ValueError as exc:  # pydantic's ValidationError names the field
            raise RecipeError(f"cleaning job values: {exc}") from None

    def to_json(self) -> str:
        return canonical_json({"recipe": self.recipe, "specs": self.specs, "eval_sets": self.eval_sets,
                               "hashes": self.hashes})  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> CleaningValues:
        try:
            raw = json.loads(text)
            return cls(raw["recipe"], raw["specs"], raw["eval_sets"], raw["hashes"])
        except (ValueError, KeyError, TypeError) as exc:
            raise RecipeError(f"cleaning job values are not the JSON the orchestrator writes: {exc!r}") from None
