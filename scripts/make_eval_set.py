"""Build the sample eval set marin_assets/sample_data/eval_sets/handbook_passages.jsonl (deterministic).

    .venv/bin/python scripts/make_eval_set.py

Passages are copied verbatim (after the cleaning job's extraction and normalisation) from the sample
corpus itself: every 6th page of the debian_handbook source and two license texts of debian_licenses.
It is a contamination test set, not a benchmark: decontamination must find exactly these passages.
Prints the checksum for recipes/eval_sets.yaml.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from marin_assets.data.curate.eval_sets import file_checksum, load_eval_sets  # noqa: E402
from marin_assets.data.extract.reference_texts import source_texts  # noqa: E402
from marin_assets.data.sources.source_registry import load_sources  # noqa: E402

OUT = REPO / "marin_assets" / "sample_data" / "eval_sets" / "handbook_passages.jsonl"
PASSAGE_WORDS = 60


def _passage(text: str) -> str | None:
    """The first paragraph past the middle of the page with enough words, cut to PASSAGE_WORDS words."""
    blocks = re.split(r"\n\s*\n", text)  # license texts: blank-line paragraphs of wrapped lines
    paragraphs = [p for p in (blocks if len(blocks) > 3 else text.split("\n")) if len(p.split()) >= 30]
    if not paragraphs:
        return None
    return " ".join(paragraphs[len(paragraphs) // 2].split()[:PASSAGE_WORDS])


def main() -> None:
    sources = load_sources()
    items = []
    handbook = sorted(source_texts(sources.get("debian_handbook")))
    for doc_id, text in handbook[::6]:
        if passage := _passage(text):
            items.append({"id": f"handbook-{len(items):02d}", "passage": passage, "copied_from": f"debian_handbook/{doc_id}"})
    for doc_id, text in sorted(source_texts(sources.get("debian_licenses"))):
        if doc_id in {"common-licenses/Apache-2.0", "common-licenses/MPL-2.0"} and (passage := _passage(text)):
            items.append({"id": f"license-{doc_id.split('/')[-1]}", "passage": passage, "copied_from": f"debian_licenses/{doc_id}"})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n" for item in items))
    print(f"{OUT}: {len(items)} passages; checksum {file_checksum(load_eval_sets().get('handbook_passages'))}")


if __name__ == "__main__":
    main()
