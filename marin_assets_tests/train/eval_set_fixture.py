"""A committed eval set under a storage root, written by the eval_set asset's own writer (eval_index.build)."""

from __future__ import annotations

import json
from pathlib import Path

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.curate import eval_index
from marin_assets.data.curate.eval_sets import EvalSetSpec
from marin_assets.data.sources.source_registry import Provenance


def write_eval_set(root: Path, name: str, texts: list[str], ngram: int = 13) -> EvalSetSpec:
    source = root / "eval_sources" / f"{name}.jsonl"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("".join(json.dumps({"id": f"{name}-{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    spec = EvalSetSpec(name=name, uri=str(source), text_fields=["text"], license="CC0-1.0",
                       provenance=Provenance(origin="test", version="1"))
    with Storage(str(root)).atomic_dir(layout.EVAL, name) as staged:
        staged.write_json(eval_index.build(spec, ngram, staged.path), eval_index.SUMMARY)
    return spec
