"""The task-sets registry (recipes/task_sets.yaml): downstream benchmarks run through lm-evaluation-harness.

A task set is a registered source like any other: its data files (local, each with its sha256), a
license and provenance that go through the data stage's compliance decision, and the harness task
YAML every data file is run with (one harness task per file, e.g. one per BLiMP paradigm). Nothing is
fetched: the task YAML reads the verified local file (`dataset_path: json`). A missing file or a
changed hash is refused naming the file, before any model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import cache
from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from marin_assets.core.hashing import combine_hashes
from marin_assets.core.recipes import NamedRegistry, Recipe, load_recipe
from marin_assets.data.sources.compliance import ComplianceVerdict, compliance_verdict, load_policy
from marin_assets.data.sources.source_registry import Provenance, SourceSpec, resolve_uri

TASK_SETS_RECIPE = "task_sets.yaml"


class TaskSetSpec(Recipe):
    name: str
    description: str = ""
    license: str = Field(description="SPDX id of the data; it must pass the compliance policy's allowlist")
    attribution: str = Field(description="who to credit (CC BY requires it)")
    provenance: Provenance
    task_yaml: str = Field(description="harness task YAML each data file runs with (relative: to this registry)")
    data_dir: str = Field(description="folder of the data files (relative: to this registry)")
    files: dict[str, str] = Field(min_length=1, description="data file name -> its sha256; one harness task each")
    category_field: str | None = Field(None, description="field of a data item naming its task's category")
    num_fewshot: int = Field(0, ge=0)
    limit: int | None = Field(None, gt=0, description="items per task (None: all)")
    # The full BLiMP takes ~7 min a run on 2 CPU cores: a suite of 16 runs would add two hours to the quickstart.
    auto_evaluate: bool = Field(True, description="`marin materialize-all` evaluates every run on it (false: on demand)")
    baselines: dict[str, float] = Field(default_factory=dict, description="published overall accuracy per model")
    # Every task set is also a decontamination set for cleaning (evaluation.task_set_decontamination).
    decontaminate: bool = Field(True, description="cleaning removes its items from the corpus (false: opt out)")
    decontamination_fields: list[str] = Field(
        default_factory=list, description="the items' text fields cleaning matches (BLiMP: [sentence_good])")

    @model_validator(mode="after")
    def _fields_when_decontaminating(self) -> "TaskSetSpec":
        if self.decontaminate and not self.decontamination_fields:
            raise ValueError("decontamination_fields: name the items' text fields cleaning must not contain "
                             "(or set decontaminate: false to opt this task set out)")
        return self

    @field_validator("name")
    @classmethod
    def _partition_safe(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", value):
            raise ValueError("must be lowercase letters, digits or '_' (it names a partition and harness tasks)")
        return value

    def task_name(self, file_name: str) -> str:
        """The harness task of one data file: <set>_<file stem> (e.g. blimp_sample_anaphor_number_agreement)."""
        return f"{self.name}_{Path(file_name).stem}"

    def file_path(self, file_name: str) -> str:
        return os.path.join(self.data_dir, file_name)


class TaskSetsRegistry(NamedRegistry):
    entries_field: ClassVar[str] = "task_sets"
    kind: ClassVar[str] = "task set"
    task_sets: list[TaskSetSpec]

    def get(self, name: str) -> TaskSetSpec:
        return super().get(name)


@cache
def load_task_sets(path: str | Path = TASK_SETS_RECIPE) -> TaskSetsRegistry:
    from marin_assets.core.recipes import recipe_path

    full = recipe_path(path)
    registry = load_recipe(full, TaskSetsRegistry)
    resolved = [s.model_copy(update={"data_dir": resolve_uri(s.data_dir, full), "task_yaml": resolve_uri(s.task_yaml, full)})
                for s in registry.task_sets]
    return registry.model_copy(update={"task_sets": resolved})


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_files(spec: TaskSetSpec) -> dict[str, str]:
    """{file name: path} once every file exists and has its registered sha256; else the first bad file, named."""
    if not os.path.isfile(spec.task_yaml):
        raise FileNotFoundError(f"task set {spec.name}: task_yaml {spec.task_yaml} does not exist")
    return verified_data_files(spec)


def verified_data_files(spec: TaskSetSpec) -> dict[str, str]:
    """verified_files without the task YAML: what reads only the items (decontamination) needs."""
    paths = {}
    for name, expected in sorted(spec.files.items()):
        path = spec.file_path(name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"task set {spec.name}: data file {path} does not exist "
                                    f"(point data_dir in task_sets.yaml at your copy)")
        actual = sha256_file(path)
        if actual != expected:
            raise ValueError(f"task set {spec.name}: data file {path} has sha256 {actual}, "
                             f"task_sets.yaml registers {expected}")
        paths[name] = path
    return paths


def inventory(spec: TaskSetSpec) -> dict:
    """The data files as the compliance decision reads a source's inventory (names, sha256, content hash)."""
    files = [{"path": name, "size": os.path.getsize(path), "sha256": spec.files[name]}
             for name, path in verified_files(spec).items()]
    return {"source": spec.name, "uri": spec.data_dir, "files": files,
            "content_hash": combine_hashes([(f["path"], f["sha256"]) for f in files])}


def task_set_verdict(spec: TaskSetSpec, policy=None) -> ComplianceVerdict:
    """The data stage's compliance decision over the task set (license allowlist, provenance, checksum)."""
    as_source = SourceSpec(name=spec.name, uri=spec.data_dir, format="jsonl", license=spec.license,
                           provenance=spec.provenance, description=spec.description)
    return compliance_verdict(spec.name, as_source, inventory(spec), policy or load_policy())


def task_categories(spec: TaskSetSpec, paths: dict[str, str]) -> dict[str, str]:
    """{harness task: category} read from each file's first item (`category_field`); {} without one."""
    if not spec.category_field:
        return {}
    categories = {}
    for name, path in paths.items():
        with open(path, encoding="utf-8") as f:
            first = json.loads(f.readline())
        if spec.category_field not in first:
            raise ValueError(f"task set {spec.name}: {path} line 1 has no field {spec.category_field!r} (category_field)")
        categories[spec.task_name(name)] = str(first[spec.category_field])
    return categories
