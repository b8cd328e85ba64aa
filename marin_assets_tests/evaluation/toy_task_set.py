"""A task set of the user's own files, built as a user would: minimal pairs in the fixture grammar's words.

The trained tiny run learned the toy grammar (mixture_fixture), so it can tell a sentence from the same
words in reverse order, while BLiMP's English words are all unknown to its word-level vocabulary.
The pairs reuse the repo's BLiMP task YAML (fields sentence_good / sentence_bad).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from marin_assets.core.hashing import combine_hashes
from marin_assets.core.recipes import recipes_dir
from marin_assets.data.sources.source_registry import Provenance
from marin_assets.evaluation.task_sets import TaskSetSpec, TaskSetsRegistry, sha256_file
from marin_assets_tests.train.mixture_fixture import OBJECTS, SUBJECTS, VERBS

BLIMP_YAML = str(recipes_dir().parent / "evaluation" / "harness_tasks" / "blimp_pairs.yaml")


def _sentence(rng: random.Random) -> str:
    s = rng.choice(SUBJECTS)
    v = VERBS[(SUBJECTS.index(s) * 7) % len(VERBS)]
    o = OBJECTS[(VERBS.index(v) * 5) % len(OBJECTS)]
    return f"the {s} {v} the {o} ."


def write_pairs(folder: Path, pairs: int = 24) -> dict[str, str]:
    """Two files of (grammatical, reversed) pairs with a category field; {file name: sha256}."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    for name, category in (("word_order.jsonl", "order"), ("word_order_b.jsonl", "order_b")):
        rows = []
        for i in range(pairs):
            good = _sentence(rng)
            rows.append({"sentence_good": good, "sentence_bad": " ".join(reversed(good.split())),
                         "linguistics_term": category, "pairID": str(i)})
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {p.name: sha256_file(str(p)) for p in sorted(folder.glob("*.jsonl"))}


def toy_task_set(folder: Path, **changes) -> TaskSetSpec:
    files = write_pairs(folder) if not (folder / "word_order.jsonl").exists() else {
        p.name: sha256_file(str(p)) for p in sorted(folder.glob("*.jsonl"))}
    spec = TaskSetSpec(
        name="toy_pairs", license="CC-BY-4.0", attribution="the test suite", task_yaml=BLIMP_YAML,
        data_dir=str(folder), files=files, category_field="linguistics_term",
        provenance=Provenance(origin="marin_assets_tests", version="1", checksum=combine_hashes(sorted(files.items()))),
        baselines={"chance": 0.5}, decontamination_fields=["sentence_good"])
    return spec.model_copy(update=changes)


def toy_registry(folder: Path, **changes) -> TaskSetsRegistry:
    return TaskSetsRegistry(task_sets=[toy_task_set(folder, **changes)])
