"""The peer-like benchmark corpus of ../shared/notes/benchmarks.md, and the statistics every benchmark prints.

Debian changelogs, man pages, READMEs and license (copyright) files installed under /usr/share, round-robin
in sorted path order, cut on paragraph boundaries into documents of at most ~3.15 KB; then 10% exact and
10% near duplicates (3-6 words changed) of random originals. When the installed documentation runs out, the
remaining originals are recombined from the paragraphs already seen (origin "recombined"): they flatter any
memo or cache, so their share is printed beside every figure. Ids: originals `pc-o-NNNNNNN`, copies
`pc-x-` / `pc-y-` (exact / near), so "keep the smallest id" keeps the original. Deterministic; built once
per size and cached under /tmp (outside the repository).

    docs = load_or_build(10_000)          # list of {"id", "text", "origin"}
    print(describe(corpus_stats(docs)))
"""

from __future__ import annotations

import json
import random
import sys
from itertools import cycle
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_docs import KINDS, cut_paragraphs  # noqa: E402
from make_bench_corpus import edit_words  # noqa: E402

TEXT_KINDS = ("changelog", "copyright", "readme", "man")  # what the peer's corpus held: no HTML
TARGET_CHARS = 3_150
MIN_CHARS = 400  # shorter pieces (a lone heading, a two-line changelog) would pull the mean size down
EXACT_SHARE = NEAR_SHARE = 0.10
CACHE = "/tmp/marin_peer_corpus-{docs}"


def original_texts(root: str = "/usr/share"):
    """(kind, text) of real documents, round-robin over the text kinds until every kind is exhausted."""
    streams = {kind: KINDS[kind][1](root) for kind in TEXT_KINDS}
    for kind in cycle(TEXT_KINDS):
        if not streams:
            return
        if kind not in streams:
            continue
        found = next(streams[kind], None)
        if found is None:
            del streams[kind]
            continue
        for piece in cut_paragraphs(found[1], TARGET_CHARS):
            if len(piece) >= MIN_CHARS:
                yield kind, piece


def _recombined(paragraphs: list[str], rng: random.Random) -> str:
    parts, size = [], 0
    while size < TARGET_CHARS * 0.8:
        parts.append(rng.choice(paragraphs))
        size += len(parts[-1])
    return edit_words("\n\n".join(parts), rng.randint(5, 40), rng)[0]


def build(n_docs: int, seed: int = 0, root: str = "/usr/share") -> list[dict]:
    rng = random.Random(seed)
    n_originals = n_docs - 2 * int(n_docs * EXACT_SHARE)
    docs, paragraphs, texts = [], [], original_texts(root)
    while len(docs) < n_originals:
        found = next(texts, None)
        if found is None and not paragraphs:
            raise RuntimeError(f"no Debian documentation found under {root}")
        if found is None:
            text, origin = _recombined(paragraphs, rng), "recombined"
        else:
            text, origin = found[1], f"debian:{found[0]}"
            paragraphs.extend(p for p in text.split("\n\n") if len(p) > 40)
        docs.append({"id": f"pc-o-{len(docs):07d}", "text": text, "origin": origin})
    originals = list(docs)
    while len(docs) < n_docs:
        near = len(docs) >= n_originals + int(n_docs * EXACT_SHARE)
        source = rng.choice(originals)
        text = edit_words(source["text"], rng.randint(3, 6), rng)[0] if near else source["text"]
        docs.append({"id": f"pc-{'y' if near else 'x'}-{len(docs):07d}", "text": text,
                     "origin": f"{'near' if near else 'exact'}_duplicate", "of": source["id"]})  # fmt: skip
    rng.shuffle(docs)
    return docs


def load_or_build(n_docs: int, folder: str | None = None) -> list[dict]:
    path = Path(folder or CACHE.format(docs=n_docs)) / "docs.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.writelines(json.dumps(d) + "\n" for d in build(n_docs))
        tmp.rename(path)
    return [json.loads(line) for line in open(path)]


def write_shards(docs: list[dict], folder: Path, n_files: int = 8, fields=("id", "text")) -> Path:
    """JSONL shards (only `fields`) for the Spark and datatrove sides; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_files):
        with open(folder / f"part-{i:03d}.jsonl", "w") as f:
            f.writelines(json.dumps({k: d[k] for k in fields}) + "\n" for d in docs[i::n_files])
    return folder


def write_docs(docs: list[dict], folder: Path, n_files: int = 8) -> list[dict]:
    """write_shards of (id, text) and return docs: what both sides of a benchmark read."""
    write_shards(docs, folder, n_files)
    return docs


def planted_near(docs: list[dict]) -> set[str]:
    """Ids of planted near duplicates whose original is among docs."""
    ids = {d["id"] for d in docs}
    return {d["id"] for d in docs if d["origin"] == "near_duplicate" and d["of"] in ids}


def corpus_stats(docs: list[dict]) -> dict:
    """Size, mean document size, distinct whitespace-chunk share (how much a per-chunk memo can hit) and the
    shares of recombined originals and planted duplicates."""
    chunks, distinct = 0, set()
    for d in docs:
        words = d["text"].split()
        chunks += len(words)
        distinct.update(words)
    n = len(docs)
    origins = [d.get("origin", "") for d in docs]
    total = sum(len(d["text"].encode()) for d in docs)
    return {"docs": n, "mb": total / 1e6, "mean_kb": total / max(1, n) / 1e3,
            "distinct_chunk_share": len(distinct) / max(1, chunks),
            "recombined_share": origins.count("recombined") / max(1, n),
            "duplicate_share": sum(o.endswith("_duplicate") for o in origins) / max(1, n)}  # fmt: skip


def describe(stats: dict, label: str = "peer-like Debian corpus") -> str:
    return (f"corpus ({label}): {stats['docs']:,} documents, {stats['mb']:.1f} MB, mean {stats['mean_kb']:.2f} KB/doc, "
            f"distinct whitespace chunks {stats['distinct_chunk_share']:.2%}, recombined originals "
            f"{stats['recombined_share']:.1%}, planted duplicates {stats['duplicate_share']:.1%}")  # fmt: skip


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    args = parser.parse_args()
    print(describe(corpus_stats(load_or_build(args.docs))))
