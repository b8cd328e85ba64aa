"""A deterministic real corpus from the Debian documentation installed by apt, for scale benchmarks.

Text: package changelogs (/usr/share/doc/*/changelog*.gz, one entry = one piece), man pages
(/usr/share/man, roff requests dropped) and /usr/share/common-licenses, cut into ~3 KB documents.
When N exceeds the distinct documents, later copies get seeded word substitutions (a third of the
words: distinct documents, not near duplicates). Then 10% exact and 10% near duplicates (3-6 words
changed) are planted, as in the corpus behind the peer figures (../shared/notes/benchmarks.md).
Written as JSONL.gz files outside the repo:

    python benchmarks/make_bench_corpus.py --docs 100000 --out /tmp/marin-bench/100000
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from pathlib import Path

TARGET_CHARS = 3150
ROOTS = (Path("/usr/share/doc"), Path("/usr/share/man"), Path("/usr/share/common-licenses"))
_ROFF = re.compile(r"^\.[A-Za-z\\\"]|^'\\\"")
_ESCAPES = re.compile(r"\\f[BIRP]|\\\(..|\\[-e&|^]|\\s[-+]?\d")


def _read(path: Path) -> str:
    data = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8", "replace")


def _pieces_of(path: Path) -> list[str]:
    text = _read(path)
    if "/man/" in path.as_posix():
        lines = [_ESCAPES.sub("", line) for line in text.splitlines() if not _ROFF.match(line)]
        text = "\n".join(line for line in lines if line.strip())
    if "changelog" in path.name:
        parts = re.split(r"\n(?=\S+ \([^)]+\) )", text)  # one Debian changelog entry per part
    else:
        parts = text.split("\n\n")
    pieces, current = [], ""
    for part in parts:
        current = f"{current}\n\n{part}" if current else part
        if len(current) >= TARGET_CHARS:
            pieces.append(current[: 2 * TARGET_CHARS])
            current = ""
    return pieces + ([current] if len(current) > 200 else [])


def debian_documents() -> list[str]:
    files = sorted(p for root in ROOTS if root.exists() for p in root.rglob("*")
                   if p.is_file() and not p.is_symlink() and ("changelog" in p.name or "/man" in p.as_posix()
                                                             or "common-licenses" in p.as_posix()))  # fmt: skip
    docs = []
    for path in files:
        try:
            docs.extend(_pieces_of(path))
        except (OSError, EOFError, gzip.BadGzipFile):
            continue  # unreadable file: not part of the corpus
    return sorted(set(docs))


def _edit(text: str, changes: int, rng: random.Random, vocab: list[str]) -> str:
    parts = re.split(r"(\s+)", text)
    slots = [i for i, p in enumerate(parts) if p and not p.isspace()]
    for _ in range(min(changes, len(slots))):
        parts[rng.choice(slots)] = rng.choice(vocab)
    return "".join(parts)


def build(n_docs: int, out: Path, n_files: int = 8, seed: int = 0) -> dict:
    rng = random.Random(seed)
    base = debian_documents()
    vocab = sorted({w for d in base[:2000] for w in d.split() if w.isalpha()})
    n_unique = n_docs - 2 * (n_docs // 10)
    texts = []
    for i in range(n_unique):
        text = base[i % len(base)]
        texts.append(text if i < len(base) else _edit(text, len(text.split()) // 3, rng, vocab))
    exact = [texts[rng.randrange(n_unique)] for _ in range(n_docs // 10)]
    near = [_edit(texts[rng.randrange(n_unique)], rng.randint(3, 6), rng, vocab) for _ in range(n_docs // 10)]
    docs = texts + exact + near
    order = list(range(len(docs)))
    rng.shuffle(order)
    out.mkdir(parents=True, exist_ok=True)
    for f in range(n_files):
        with gzip.open(out / f"part-{f:03d}.jsonl.gz", "wt", compresslevel=1) as sink:
            for i in order[f::n_files]:
                sink.write(json.dumps({"id": f"doc-{i:08d}", "text": docs[i]}) + "\n")
    return {"documents": len(docs), "distinct_base": len(base), "bytes": sum(len(d.encode()) for d in docs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=8)
    args = parser.parse_args()
    print(json.dumps(build(args.docs, args.out, args.files)))


if __name__ == "__main__":
    main()
