"""Benchmark corpus: the sample sources' texts scaled up to N documents with variations.

Documents are ~3 KB of randomly chosen paragraphs of the sample texts (licenses, Python docs, dirty
web), edited per document (word substitutions), plus 10% exact and 10% near
duplicates (3-6 words changed), like the corpus behind the peer figures in the notes. Texts are
normalised up front so both sides of a comparison see exactly the same characters. Deterministic.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources

TARGET_CHARS = 3150


def sample_paragraphs(max_chars: int = 500) -> list[str]:
    """Distinct paragraphs of the sample texts, long ones cut into pieces of at most ~max_chars.

    Small pieces keep unrelated benchmark documents unrelated (no accidental near duplicates).
    """
    paragraphs = set()
    for spec in load_sources().sources:
        for path in list_source_files(spec):
            for rec in read_file(path, spec):
                if isinstance(rec, RawRecord):
                    text = html_to_text(rec.content) if rec.content_type == "html" else rec.content
                    for paragraph in normalize_text(text).split("\n\n"):
                        paragraphs.update(_pieces(paragraph, max_chars))
    return sorted(p for p in paragraphs if len(p) > 40)


def _pieces(paragraph: str, max_chars: int) -> list[str]:
    pieces, current = [], ""
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n", paragraph):
        if current and len(current) + len(sentence) > max_chars:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    return pieces + [current] if current else pieces


def _edit_words(text: str, changes: int, vocab: list[str], rng: random.Random) -> str:
    """Replace `changes` words (whitespace and line structure untouched)."""
    parts = re.split(r"(\s+)", text)
    word_slots = [i for i, p in enumerate(parts) if p and not p.isspace()]
    for _ in range(changes):
        parts[rng.choice(word_slots)] = rng.choice(vocab)
    return "".join(parts)


def build_corpus(n_docs: int, out_dir: Path, n_files: int = 8, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    paragraphs = sample_paragraphs()
    vocab = sorted({w for p in paragraphs for w in p.split() if w.isalpha()})
    docs: list[dict] = []
    n_unique = int(n_docs * 0.8)
    while len(docs) < n_unique:
        parts, size = [], 0
        while size < TARGET_CHARS:
            parts.append(rng.choice(paragraphs))
            size += len(parts[-1])
        text = _edit_words("\n\n".join(parts), rng.randint(5, 40), vocab, rng)
        docs.append({"id": f"doc-{len(docs):07d}", "text": text})
    while len(docs) < n_docs:
        original = docs[rng.randrange(n_unique)]["text"]
        near = rng.random() < 0.5
        text = _edit_words(original, rng.randint(3, 6), vocab, rng) if near else original
        docs.append({"id": f"{'near' if near else 'exact'}-{len(docs):07d}", "text": text})
    rng.shuffle(docs)
    out_dir.mkdir(parents=True, exist_ok=True)
    for i in range(n_files):
        with open(out_dir / f"part-{i:03d}.jsonl", "w") as f:
            for doc in docs[i::n_files]:
                f.write(json.dumps(doc) + "\n")
    return docs
