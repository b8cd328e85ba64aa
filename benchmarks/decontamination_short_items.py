"""False positives of task-set decontamination's short-item rule: documents that match a BLiMP item whole.

    .venv/bin/python benchmarks/decontamination_short_items.py [--blimp DIR] [--cleaned STORAGE_ROOT]
        [--articles GROUND_TRUTH_JSON] [--min-words 2 3 4]

Indexes every acceptable sentence of the full BLiMP (67,000) with cleaning's own rule (data.task_set_indexes:
each item whole at n = min(13, its words), items shorter than the minimum left out) and scans texts that hold
no BLiMP item, so every hit is a false positive: a quickstart's cleaned documents (STORAGE_ROOT/cleaned/*/
documents) and the news articles of the article-extraction benchmark (its ground-truth articleBody). Prints,
per minimum item length, the items indexed and the documents hit with the item that hit.
"""

from __future__ import annotations

import argparse
import glob
import json
import os

import pyarrow.parquet as pq

from marin_assets.data.curate.decontaminate import decontaminate
from marin_assets.data.curate.item_hits import build_item_index, item_hits
from marin_assets.data.curate.task_set_indexes import short_item_index

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")


def blimp_items(folder: str) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    for path in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line_number, line in enumerate(f, 1):
                ids.append(f"{os.path.basename(path)[:-6]}/{line_number}")
                texts.append(json.loads(line)["sentence_good"])
    return ids, texts


def corpora(cleaned: str | None, articles: str | None) -> dict[str, list[tuple[str, str]]]:
    out = {}
    if cleaned:
        docs = []
        for path in sorted(glob.glob(os.path.join(cleaned, "cleaned", "*", "documents", "*.parquet"))):
            table = pq.read_table(path, columns=["id", "text"]).to_pydict()
            docs += list(zip(table["id"], table["text"]))
        out["cleaned sample corpus"] = docs
    if articles and os.path.exists(articles):
        with open(articles, encoding="utf-8") as f:
            out["extraction-benchmark news"] = [(k, v.get("articleBody") or "") for k, v in json.load(f).items()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blimp", default=os.path.join(SHARED, "blimp", "data"))
    parser.add_argument("--cleaned", default=None, help="a storage root with committed cleaned tables")
    parser.add_argument("--articles", default=os.path.join(SHARED, "article-extraction-benchmark", "ground-truth.json"))
    parser.add_argument("--min-words", type=int, nargs="+", default=[2, 3, 4])
    args = parser.parse_args()
    ids, texts = blimp_items(args.blimp)
    docs = corpora(args.cleaned, args.articles)
    for name, rows in docs.items():
        print(f"{name}: {len(rows)} documents, {sum(len(t.split()) for _, t in rows):,} words")
    for min_words in args.min_words:
        hashes, too_short = short_item_index(ids, texts, 13, min_words)
        items = build_item_index((("blimp", i, "sentence_good", t) for i, t in zip(ids, texts)), 13, True, min_words)
        print(f"min_item_words {min_words}: {len(ids) - len(too_short):,} items indexed, {len(too_short):,} too short")
        for name, rows in docs.items():
            hit = [(doc, item_hits(doc, text, items)) for doc, text in rows
                   if decontaminate(text, {"blimp": hashes}, policy="drop").reject]
            print(f"  {name}: {len(hit)} of {len(rows)} documents hit")
            for doc, found in hit[:10]:
                print(f"    {doc[:40]}: {[texts[ids.index(h['item'])] for h in found][:3]}")


if __name__ == "__main__":
    main()
