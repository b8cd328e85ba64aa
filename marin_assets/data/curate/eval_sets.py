"""The eval-sets registry (recipes/eval_sets.yaml): held-out sets the cleaned corpus must not contain.

Registered like sources (name, uri, format, text fields, license, checksum), so the training side can
evaluate on the same sets later; each becomes a partition of the eval_set asset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import ClassVar
from pathlib import Path

import fsspec
from pydantic import Field, field_validator

from marin_assets.core.hashing import combine_hashes, sha256_stream
from marin_assets.core.recipes import NamedRegistry, Recipe, load_recipe
from marin_assets.data.sources.source_registry import Provenance, resolve_uri

EVAL_SETS_RECIPE = "eval_sets.yaml"


class EvalSetSpec(Recipe):
    name: str
    uri: str = Field(description="One JSONL file; relative paths are relative to the registry file")
    format: str = Field(default="jsonl", pattern="^jsonl$")
    text_fields: list[str] = Field(min_length=1, description="fields whose text is checked for overlap")
    id_field: str = "id"
    license: str
    provenance: Provenance
    description: str = ""

    @field_validator("name")
    @classmethod
    def _partition_safe(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_\-]*", value):
            raise ValueError("must be lowercase letters, digits, '_' or '-' (it names a partition and a folder)")
        return value


class EvalSetsRegistry(NamedRegistry):
    entries_field: ClassVar[str] = "eval_sets"
    kind: ClassVar[str] = "eval set"
    eval_sets: list[EvalSetSpec]

    def get(self, name: str) -> EvalSetSpec:
        return super().get(name)


@cache
def load_eval_sets(path: str | Path = EVAL_SETS_RECIPE) -> EvalSetsRegistry:
    from marin_assets.core.recipes import recipe_path

    full = recipe_path(path)
    registry = load_recipe(full, EvalSetsRegistry)
    return registry.model_copy(
        update={"eval_sets": [s.model_copy(update={"uri": resolve_uri(s.uri, full)}) for s in registry.eval_sets]}
    )


def file_checksum(spec: EvalSetSpec) -> str:
    """The provenance checksum of an eval set: combine_hashes of (file name, sha256), as for sources."""
    with fsspec.open(spec.uri, "rb") as f:
        return combine_hashes([(Path(spec.uri).name, sha256_stream(f))])


def read_items(spec: EvalSetSpec) -> Iterator[tuple[str, str]]:
    """(item id, text) per line: the text fields joined by a blank line. A bad line is an error, not skipped."""
    with fsspec.open(spec.uri, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                missing = [k for k in (spec.id_field, *spec.text_fields) if not isinstance(item.get(k), str)]
            except json.JSONDecodeError as exc:
                raise ValueError(f"eval set {spec.name}: {spec.uri} line {number}: not JSON: {exc}") from None
            if missing:
                raise ValueError(f"eval set {spec.name}: {spec.uri} line {number}: missing text fields {missing}")
            yield item[spec.id_field], "\n\n".join(item[k] for k in spec.text_fields)
