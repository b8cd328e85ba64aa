"""Benchmark: tokenize-and-write throughput vs the ceiling, `Tokenizer.encode_batch_fast` in memory.

Ours: `tokenize_source` end to end (read cleaned Parquet, encode, add BOS/EOS, write zstd token
shards) as the Spark job it is: local[N], one single-threaded task per core. Ceiling: the fastest raw
call of `tokenizers`, `encode_batch_fast` (no offsets), on the same texts already in memory, chunked,
on the tokenizer's Rust thread pool of N threads (RAYON_NUM_THREADS=N). Both sides use N cores, keep
their tokenizer (and its word cache) across rounds, run one untimed warm-up round each (the JVM's
JIT, Spark's Python workers), and must count the same tokens. Target: ours
>= 0.9x the ceiling. Figures: median and range of --repeat rounds per side (benchmarks/harness.py).

Texts (--texts): `peer`, the peer-like Debian corpus's documents (benchmarks/peer_corpus.py, ~3.1 KB each,
realistic length); `short`, Debian changelog entries, copyright files and license texts split small. The
mean size and distinct-chunk share are printed; so are the cold costs (Spark session start, the untimed first
round of each side). Target (issue 54): ours >= 1.0x the ceiling on both.

    .venv/bin/python benchmarks/tokenize_throughput.py [--texts peer|short] [--mb 30] [--cores 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_RATIO = 1.0
CHUNK = 1_000


def debian_texts(max_bytes: int) -> list[str]:
    """Changelog entries (split on the blank line before a new version), copyrights, license texts."""
    texts, total = [], 0
    paths = sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")) + sorted(
        glob.glob("/usr/share/doc/*/copyright") + glob.glob("/usr/share/common-licenses/*"))
    for path in paths:
        try:
            raw = gzip.open(path, "rt", errors="replace").read() if path.endswith(".gz") else open(
                path, errors="replace").read()
        except (OSError, EOFError):
            continue
        for part in raw.split("\n\n ") if path.endswith(".gz") else [raw]:
            texts.append(part)
            total += len(part)
            if total >= max_bytes:
                return texts
    return texts


def ceiling_tokens(tok, texts: list[str]) -> int:
    return sum(len(e.ids) for i in range(0, len(texts), CHUNK)
               for e in tok.encode_batch_fast(texts[i:i + CHUNK], add_special_tokens=False))


def tree_cpu() -> dict[int, float]:
    """CPU seconds so far of this process and its descendants (the JVM, Spark's Python workers)."""
    import psutil

    out = {}
    for proc in [psutil.Process(), *psutil.Process().children(recursive=True)]:
        try:
            times = proc.cpu_times()
            out[proc.pid] = times.user + times.system
        except psutil.Error:
            pass
    return out


def cpu_seconds(fn, spent: list[float]):
    """Run fn; append the CPU seconds the process tree spent on it (robust to a busy machine, unlike wall)."""
    before = tree_cpu()
    result = fn()
    after = tree_cpu()
    spent.append(sum(t - before.get(pid, 0.0) for pid, t in after.items()))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=30)
    parser.add_argument("--texts", choices=("peer", "short"), default="peer",
                        help="peer: the peer-like corpus's ~3 KB documents; short: changelog entries")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--documents-per-shard", type=int, default=2_000)
    args = parser.parse_args()
    # before tokenizers starts its global pool: the ceiling gets exactly --cores threads
    os.environ["RAYON_NUM_THREADS"] = str(args.cores)
    os.environ["TOKENIZERS_PARALLELISM"] = "true"  # ours' Spark tasks turn it off for themselves

    from harness import Side, report, timed
    from tokenizers import Tokenizer

    from marin_assets.core.storage import Storage
    from marin_assets.resources.spark import SparkResource
    from marin_assets.tokenize.encoding import EncodeSettings
    from marin_assets.tokenize.tokenize_recipe import TokenizerSpec
    from marin_assets.tokenize.tokenize_job import cleaned_document_files, tokenize_source
    from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILE, build_tokenizer
    from marin_assets_tests.tokenize.conftest import write_cleaned_source

    import peer_corpus

    if args.texts == "peer":  # as many of the 100k-size build's documents as make --mb (10k docs: 31 MB)
        docs = peer_corpus.load_or_build(10_000 if args.mb <= 31 else 100_000)
        texts, total = [], 0
        for d in docs:
            if total >= args.mb * 1e6:
                break
            texts.append(d["text"])
            total += len(d["text"])
    else:
        texts = debian_texts(int(args.mb * 1e6))
    print(peer_corpus.describe(peer_corpus.corpus_stats([{"text": t} for t in texts]), f"{args.texts} texts"))
    print(f"corpus: {len(texts):,} documents, {sum(map(len, texts)) / 1e6:.1f} MB; "
          f"both sides on {args.cores} cores (ours: Spark local[{args.cores}], one serial task per core; "
          f"ceiling: RAYON_NUM_THREADS={args.cores})")
    with tempfile.TemporaryDirectory() as tmp:
        tok_dir = os.path.join(tmp, "tok")
        summary = build_tokenizer(TokenizerSpec(name="bench", vocab_size=args.vocab), texts[::10], tok_dir)
        storage = Storage(os.path.join(tmp, "root"))
        write_cleaned_source(storage, "bench", texts, files=4)
        files = cleaned_document_files(storage, "bench")
        settings = EncodeSettings(tok_dir, summary.hash, add_bos=True, add_eos=True, batch_documents=CHUNK)
        tok = Tokenizer.from_file(os.path.join(tok_dir, TOKENIZER_FILE))
        raw_tokens = ceiling_tokens(tok, texts)
        session_s, spark = timed(lambda: SparkResource(master=f"local[{args.cores}]").get_session())

        out = os.path.join(tmp, "out")

        def ours_round() -> dict:
            shutil.rmtree(out, ignore_errors=True)
            stats = tokenize_source(spark, files, "bench", out, settings, args.documents_per_shard)
            assert stats["tokens"] - 2 * stats["documents"] == raw_tokens, "ours counted other tokens"
            return stats

        ours = Side("ours", cores=args.cores)
        peer = Side("encode_batch_fast", cores=args.cores)
        # one untimed round each first (JVM JIT, Spark's Python workers, word caches): the cold costs
        ours_first, peer_first = timed(ours_round)[0], timed(lambda: ceiling_tokens(tok, texts))[0]
        print(f"cold: Spark session start {session_s:.1f} s, first round ours {ours_first:.1f} s, "
              f"{'encode_batch_fast'} {peer_first:.1f} s (not in the medians)")
        ours_cpu, peer_cpu = [], []
        for _ in range(args.repeat):  # BOS/EOS are ours, not the tokenizer's: not counted
            ours.time(lambda: cpu_seconds(ours_round, ours_cpu), units=raw_tokens)
            peer.time(lambda: cpu_seconds(lambda: ceiling_tokens(tok, texts), peer_cpu), units=raw_tokens)
        print(f"ours: Spark read + encode + BOS/EOS + write, {len(ours.last['shards'])} shards; "
              f"both sides: {raw_tokens:,} tokenizer tokens per round")
        print(f"CPU seconds per round (process tree, JVM and workers included): ours "
              f"{', '.join(f'{c:.1f}' for c in ours_cpu)}; {peer.name} {', '.join(f'{c:.1f}' for c in peer_cpu)}")
        report("tokenize + write vs encode_batch_fast in memory (tokens/s)", ours, peer, unit="tokens/s",
               target=TARGET_RATIO)
        spark.stop()


if __name__ == "__main__":
    main()
