"""A task set as a decontamination set, reporting hits per eval item: which item, which document (pure).

The matcher is the data stage's (data.item_hits, also used by the cleaning job's per-item report).
Each item contributes the n-grams of each of its text fields; an item shorter than n words
contributes its whole text as one shorter n-gram (BLiMP's sentences are 4-12 words, so at the usual
n = 13 they would otherwise never match anything). `item_hits` names, for one document, every
(task, item) it shares an n-gram with; `eval_set_rows` writes the set as the eval-sets
registry's JSONL (id + text fields), to register it for the cleaning stage's decontamination.
"""

from __future__ import annotations

import json

from marin_assets.data.curate.item_hits import ItemIndex, build_item_index, hits_by_item, item_hits  # noqa: F401 (the matcher)
from marin_assets.evaluation.task_sets import TaskSetSpec, verified_data_files


def item_ids_and_texts(spec: TaskSetSpec, text_fields: list[str], id_field: str | None = None):
    """(task, item id, field, text) per text field of every item; the id is the line number unless `id_field`."""
    for file_name, path in verified_data_files(spec).items():
        task = spec.task_name(file_name)
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                item = json.loads(line)
                item_id = str(item[id_field]) if id_field else str(number)
                for field in text_fields:
                    if not isinstance(item.get(field), str):
                        raise ValueError(f"task set {spec.name}: {path} line {number}: no text field {field!r}")
                    yield task, item_id, field, item[field]


def eval_set_rows(spec: TaskSetSpec, text_fields: list[str]) -> list[dict]:
    """The task set as eval-sets registry rows: {"id": "<task>/<item>", <field>: text, ...} per item."""
    rows: dict[str, dict] = {}
    for task, item_id, field, text in item_ids_and_texts(spec, text_fields):
        rows.setdefault(f"{task}/{item_id}", {"id": f"{task}/{item_id}"})[field] = text
    return list(rows.values())


def export_eval_set(spec: TaskSetSpec, text_fields: list[str], out_path: str) -> dict:
    """Write the task set as an eval-sets JSONL (atomically) and return its recipes/eval_sets.yaml entry, so the
    cleaning job decontaminates against it and reports hits per item (`<task>/<line>`)."""
    import os

    from marin_assets.core.hashing import combine_hashes, sha256_bytes
    from marin_assets.core.storage import Storage

    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in eval_set_rows(spec, text_fields)).encode()
    folder, name = os.path.split(os.path.abspath(out_path))
    Storage(folder).write_bytes_atomic(data, name)
    return {"name": spec.name, "uri": out_path, "format": "jsonl", "text_fields": list(text_fields), "id_field": "id",
            "license": spec.license, "description": f"Task set {spec.name} as a decontamination set. {spec.attribution}",
            "provenance": {"origin": f"task set {spec.name} ({spec.provenance.origin})", "version": spec.provenance.version,
                           "checksum": combine_hashes([(name, sha256_bytes(data))])}}


def main(argv: list[str] | None = None) -> None:
    """python -m marin_assets.evaluation.item_contamination TASK_SET OUT.jsonl FIELD [FIELD ...]: print the entry."""
    import argparse

    import yaml

    from marin_assets.evaluation.task_sets import load_task_sets

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("task_set")
    parser.add_argument("out")
    parser.add_argument("fields", nargs="+", help="the items' text fields (BLiMP: sentence_good sentence_bad)")
    args = parser.parse_args(argv)
    entry = export_eval_set(load_task_sets().get(args.task_set), args.fields, args.out)
    print(yaml.safe_dump({"eval_sets": [entry]}, sort_keys=False, allow_unicode=True))


if __name__ == "__main__":
    main()
