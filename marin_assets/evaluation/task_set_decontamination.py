"""Every registered task set as a decontamination set for cleaning, without a second registration (pure).

For each task set with `decontaminate: true` (the default), its items' `decontamination_fields` (BLiMP:
the acceptable sentence) are written normalised, one row per item and field, with the id
`<harness task>/<line>` that cleaning's per-item report names. The data stage reads them back
(data.task_set_indexes) and matches each item whole when it is shorter than the n-gram size.
"""

from __future__ import annotations

import posixpath

import pyarrow as pa

from marin_assets.data.curate.decontaminate import normalized_words
from marin_assets.data.spark.parquet_output import write_arrow_table
from marin_assets.evaluation.item_contamination import item_ids_and_texts
from marin_assets.evaluation.task_sets import TaskSetsRegistry

MANIFEST = "manifest.json"


def items_file(task_set: str) -> str:
    return f"{task_set}.items.parquet"  # one flat folder: staged outputs may be object-store prefixes


def decontaminating(registry: TaskSetsRegistry) -> list[dict]:
    """What the decontamination index depends on, per task set that decontaminates (files by sha256)."""
    return [{"name": s.name, "fields": list(s.decontamination_fields), "files": dict(sorted(s.files.items()))}
            for s in registry.task_sets if s.decontaminate]


def write_items(registry: TaskSetsRegistry, out_dir: str) -> dict:
    """<out_dir>/<task set>.items.parquet (id, field, normalised text, words) per decontaminating task set;
    return the manifest: the sets written, their item counts, and the sets opted out."""
    written = {}
    for spec in (s for s in registry.task_sets if s.decontaminate):
        ids, fields, texts, words = [], [], [], []
        for task, item_id, field, text in item_ids_and_texts(spec, spec.decontamination_fields):
            normal = normalized_words(text)
            ids.append(f"{task}/{item_id}"), fields.append(field), texts.append(" ".join(normal)), words.append(len(normal))
        write_arrow_table(pa.table({"id": ids, "field": fields, "text": texts, "words": words}),
                          posixpath.join(out_dir, items_file(spec.name)))
        written[spec.name] = {"file": items_file(spec.name), "items": len(set(ids)), "texts": len(ids), "fields": list(spec.decontamination_fields),
                              "license": spec.license}
    return {"task_sets": written, "opted_out": [s.name for s in registry.task_sets if not s.decontaminate]}
