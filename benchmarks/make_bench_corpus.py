"""A deterministic benchmark corpus from the Debian documentation installed by apt, with planted duplicates.

    .venv/bin/python benchmarks/make_bench_corpus.py --docs 10000 [--out /tmp/marin_bench_corpus]

Real documents first, in sorted path order, round-robin over five kinds: changelog entries
(changelog.Debian.gz, grouped to ~4 KB), copyright files, /usr/share/doc READMEs, man pages rendered
to text by groff, and HTML pages (/usr/share/doc/**/*.html). Texts longer than 12 KB are cut on
paragraph boundaries. When a kind runs out (the installed docs hold a few hundred MB; the target
scale is >= 1M documents / >= 3 GB), its documents are recombined from a bounded pool of the real
paragraphs seen so far (metadata "origin": "recombined"), so any --docs is reachable. Planted
duplicates: 10% exact copies and 10% near copies (3-6 words changed) of a recent original of the
same container; a copy always has a larger id than its original, so "keep the smallest id" keeps it.

Output (outside the repo): text/part-NNNNN.jsonl (plain text: id, url, text, metadata), html/part-NNNNN.warc.gz
(HTML pages as WARC resource records, WARC-Record-ID = the document id), planted_duplicates.jsonl,
source_files.txt and manifest.json (counts, bytes, sha256 per shard, package versions, planted ids).
Streaming with bounded memory (a ring of recent originals and a capped paragraph pool); same
arguments and same installed packages give the same bytes. Built in <out>.tmp, then renamed.

Debian packages (installed when missing and running as root): groff-base, man-db, manpages, manpages-dev
(man pages and their renderer), python3.11-doc, debian-handbook, debian-reference-en (HTML pages).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter, deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_docs import KINDS, cut_paragraphs, html_text  # noqa: E402

PACKAGES = ("groff-base", "man-db", "manpages", "manpages-dev", "python3.11-doc", "debian-handbook",
            "debian-reference-en")  # fmt: skip
DEFAULT_OUT = "/tmp/marin_bench_corpus"
DATE = "2026-11-30T00:00:00Z"  # fixed WARC-Date: the bytes must not depend on the build time
RECOMBINED_CHARS = 3_150
POOL_CHARS = 64 * 2**20  # paragraph pool cap for recombined documents (bounded memory)
RING = 2_048  # recent originals that duplicates are drawn from (bounded memory)
EXACT_SHARE = NEAR_SHARE = 0.10
# Replacement words for near duplicates: fixed, so the corpus does not depend on a vocabulary scan.
WORDS = ("river", "window", "orange", "silent", "protocol", "garden", "vector", "marble", "winter", "ticket",
         "bridge", "copper", "lantern", "harbor", "meadow", "signal", "candle", "puzzle", "saddle", "thunder")  # fmt: skip


def ensure_packages(packages=PACKAGES) -> list[str]:
    """Install missing Debian packages (root only); return those still missing."""
    def missing() -> list[str]:
        out = []
        for p in packages:
            status = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", p], capture_output=True, text=True)
            if "install ok installed" not in status.stdout:
                out.append(p)
        return out

    todo = missing()
    if todo and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {' '.join(todo)}", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *todo], check=False, env=env)
        todo = missing()
    if todo:
        print(f"warning: Debian packages missing (the corpus uses what is installed): {' '.join(todo)}",
              file=sys.stderr)
    return todo


def package_versions(packages=PACKAGES) -> dict[str, str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\n", *packages],
                         capture_output=True, text=True).stdout  # fmt: skip
    return dict(sorted(line.split("\t", 1) for line in out.splitlines() if "\t" in line))


def edit_words(text: str, changes: int, rng: random.Random, markup: bool = False) -> tuple[str, int]:
    """Replace up to `changes` distinct words (returns how many); with markup, only words outside tags."""
    parts = re.split(r"(<[^>]*>|\s+)" if markup else r"(\s+)", text)
    slots = [i for i, p in enumerate(parts) if p.isalpha()]
    chosen = rng.sample(slots, min(changes, len(slots)))
    for i in chosen:
        parts[i] = rng.choice([w for w in WORDS if w != parts[i]])
    return "".join(parts), len(chosen)


def recombined_text(pool: list[str], rng: random.Random) -> str:
    parts, size = [], 0
    while size < RECOMBINED_CHARS:
        parts.append(rng.choice(pool))
        size += len(parts[-1])
    return edit_words("\n\n".join(parts), rng.randint(5, 40), rng)[0]


def recombined_html(pool: list[str], rng: random.Random) -> str:
    paras = recombined_text(pool, rng).split("\n\n")
    title = html.escape(" ".join(paras[0].split()[:8]))
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paras)
    return f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body><h1>{title}</h1>\n{body}\n</body></html>\n"


class ShardWriter:
    """Rotating shards of one container; gzip members with mtime 0 so the bytes are reproducible."""

    def __init__(self, folder: Path, container: str, docs_per_shard: int):
        self.folder, self.container, self.per_shard = folder, container, docs_per_shard
        self.shards: list[dict] = []
        self.f = None

    def write(self, doc: dict) -> None:
        if self.f is None or self.shards[-1]["docs"] >= self.per_shard:
            self.close()
            suffix = "jsonl" if self.container == "text" else "warc.gz"
            name = f"{self.container}/part-{len(self.shards):05d}.{suffix}"
            (self.folder / self.container).mkdir(parents=True, exist_ok=True)
            self.f = open(self.folder / name, "wb")
            self.shards.append({"path": name, "docs": 0, "text_bytes": 0})
        data = doc["text"].encode()
        if self.container == "text":
            self.f.write(json.dumps(doc, ensure_ascii=False, sort_keys=True).encode() + b"\n")
        else:
            self.f.write(gzip.compress(_warc_resource(doc["id"], doc["url"], data), mtime=0))
        self.shards[-1]["docs"] += 1
        self.shards[-1]["text_bytes"] += len(data)

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            shard = self.shards[-1]
            path = self.folder / shard["path"]
            shard.update(bytes=path.stat().st_size, sha256=_sha256(path))
            self.f = None


def _warc_resource(doc_id: str, url: str, payload: bytes) -> bytes:
    head = (f"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:marin-bench:{doc_id}>\r\n"
            f"WARC-Date: {DATE}\r\nWARC-Target-URI: {url}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n")  # fmt: skip
    return head.encode() + payload + b"\r\n\r\n"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def build(n_docs: int, out: Path, *, seed: int = 0, docs_per_shard: int = 10_000, root: str = "/usr/share") -> dict:
    """Write the corpus to `out` (replacing it) and return the manifest."""
    rng = random.Random(seed)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    writers = {c: ShardWriter(tmp, c, docs_per_shard) for c in ("text", "html")}
    streams = {kind: gen(root) for kind, (_, gen) in KINDS.items()}
    rings = {c: deque(maxlen=RING) for c in writers}
    pool, pool_chars = [], 0
    counts: Counter = Counter()
    with open(tmp / "planted_duplicates.jsonl", "w") as planted, open(tmp / "source_files.txt", "w") as sources:
        seen_sources: set[str] = set()  # one line per source file (bounded by the installed docs)
        for i in range(n_docs):
            kind = list(KINDS)[i % len(KINDS)]
            container = KINDS[kind][0]
            doc_id = f"dbc-{i:09d}"
            roll, ring = rng.random(), rings[container]
            if ring and roll < EXACT_SHARE + NEAR_SHARE:
                original = rng.choice(ring)
                near = roll >= EXACT_SHARE
                text, changes = original["text"], 0
                if near:
                    text, changes = edit_words(text, rng.randint(3, 6), rng, container == "html")
                dup = "near" if near else "exact"
                planted.write(json.dumps({"id": doc_id, "of": original["id"], "kind": dup, "container": container,
                                          "words_changed": changes}) + "\n")  # fmt: skip
                meta = {"kind": original["metadata"]["kind"], "origin": f"{dup}_duplicate", "of": original["id"]}
                doc = {"id": doc_id, "url": f"{original['url']}#{doc_id}", "text": text, "metadata": meta}
                counts[f"{container}:{dup}_duplicate"] += 1
            else:
                found = next(streams[kind], None)
                if found is not None:
                    path, text = found
                    origin = "debian"
                    if path not in seen_sources:
                        sources.write(path + "\n")
                        seen_sources.add(path)
                    if pool_chars < POOL_CHARS:
                        paras = [p for p in cut_paragraphs(text if kind != "html" else html_text(text), 500) if len(p) > 40]
                        pool.extend(paras)
                        pool_chars += sum(map(len, paras))
                elif pool:
                    text = recombined_html(pool, rng) if kind == "html" else recombined_text(pool, rng)
                    path, origin = f"/recombined/{kind}/{i}", "recombined"
                else:
                    raise RuntimeError(f"no Debian documentation found under {root} to build a corpus from")
                doc = {"id": doc_id, "url": f"file://{path}", "text": text, "metadata": {"kind": kind, "origin": origin}}
                ring.append(doc)
                counts[f"{container}:{kind}:{origin}"] += 1
            writers[container].write(doc)
    for w in writers.values():
        w.close()
    shards = [s for w in writers.values() for s in w.shards]
    manifest = {
        "docs": n_docs, "seed": seed, "docs_per_shard": docs_per_shard, "root": root,
        "counts": dict(sorted(counts.items())),
        "planted": {"exact": sum(v for k, v in counts.items() if k.endswith("exact_duplicate")),
                    "near": sum(v for k, v in counts.items() if k.endswith("near_duplicate")),
                    "file": "planted_duplicates.jsonl", "sha256": _sha256(tmp / "planted_duplicates.jsonl")},
        "text_bytes": sum(s["text_bytes"] for s in shards), "file_bytes": sum(s["bytes"] for s in shards),
        "shards": shards,
        "packages": package_versions(),
        "source_files": {"file": "source_files.txt", "sha256": _sha256(tmp / "source_files.txt")},
    }  # fmt: skip
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return manifest


def load_manifest(out: str | Path) -> dict:
    return json.loads((Path(out) / "manifest.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs-per-shard", type=int, default=10_000)
    parser.add_argument("--no-install", action="store_true", help="use what is installed, do not call apt-get")
    args = parser.parse_args()
    if Path(args.out).resolve().is_relative_to(Path(__file__).resolve().parents[1]):
        parser.error("--out must be outside the repository")
    if not args.no_install:
        ensure_packages()
    m = build(args.docs, Path(args.out), seed=args.seed, docs_per_shard=args.docs_per_shard)
    print(f"{m['docs']} documents, {m['text_bytes'] / 1e6:.1f} MB of text, {len(m['shards'])} shards, "
          f"{m['planted']['exact']} exact + {m['planted']['near']} near duplicates -> {args.out}")  # fmt: skip
    for key, n in m["counts"].items():
        print(f"  {key:40s} {n}")


if __name__ == "__main__":
    main()
