"""Benchmark: tokenize-and-write throughput vs the ceiling, raw `tokenizers` batch encoding in memory.

Ours: `tokenize_source` end to end (read cleaned Parquet, encode with BOS/EOS, write token shards),
as the Spark job it is (`--master`, default local[2]: one single-threaded task per core). Ceiling: `Tokenizer.encode_batch_fast` (the fastest raw
call; `encode_batch` is printed too) on the same texts already in memory, chunked, using the
tokenizer's own thread pool on all cores. Both must produce the same token count. Target: ours
>= 0.8x the ceiling on 2 cores.

Corpus: Debian changelog entries, copyright files and license texts from this machine.

    .venv/bin/python benchmarks/tokenize_throughput.py [--mb 30] [--master local[2]] [--vocab 8192]
"""

from __future__ import annotations

import argparse
import glob
import gzip
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Only light imports at module level: the worker processes (spawn) re-import this script.
from marin_assets.core.storage import Storage  # noqa: E402
from marin_assets.tokenize.encoding import EncodeSettings  # noqa: E402
from marin_assets.tokenize.recipes import TokenizerSpec  # noqa: E402
from marin_assets.tokenize.tokenize_job import cleaned_document_files, tokenize_source  # noqa: E402
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILE, build_tokenizer  # noqa: E402

TARGET_RATIO = 0.8
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


def main() -> None:
    from marin_assets_tests.tokenize.conftest import write_cleaned_source  # imports dagster: not in workers

    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=30)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--documents-per-shard", type=int, default=2_000)
    args = parser.parse_args()

    texts = debian_texts(int(args.mb * 1e6))
    print(f"corpus: {len(texts):,} documents, {sum(map(len, texts)) / 1e6:.1f} MB, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        tok_dir = os.path.join(tmp, "tok")
        summary = build_tokenizer(TokenizerSpec(name="bench", vocab_size=args.vocab), texts[::10], tok_dir)
        storage = Storage(os.path.join(tmp, "root"))
        write_cleaned_source(storage, "bench", texts, files=4)

        from tokenizers import Tokenizer

        ceilings = {}
        for method in ("encode_batch", "encode_batch_fast"):
            tok = Tokenizer.from_file(os.path.join(tok_dir, TOKENIZER_FILE))  # fresh: its word cache starts cold
            encode = getattr(tok, method)
            with Timer() as timer:
                raw_tokens = 0
                for i in range(0, len(texts), CHUNK):
                    raw_tokens += sum(len(e.ids) for e in encode(texts[i:i + CHUNK], add_special_tokens=False))
            ceilings[method] = (raw_tokens, timer)

        out = os.path.join(tmp, "out")
        os.makedirs(out)
        settings = EncodeSettings(tok_dir, summary.hash, add_bos=True, add_eos=True, batch_documents=CHUNK)
        from marin_assets.resources.spark import SparkResource

        spark = SparkResource(master=args.master).get_session()
        with Timer() as ours:
            stats = tokenize_source(spark, cleaned_document_files(storage, "bench"), "bench", out, settings,
                                    args.documents_per_shard)

    ours_tokens = stats["tokens"] - 2 * stats["documents"]  # BOS/EOS are ours, not the tokenizer's
    assert ours_tokens == raw_tokens, f"different tokens: ours {ours_tokens} vs raw {raw_tokens}"
    ceiling_tokens, ceiling = ceilings["encode_batch_fast"]
    print(f"{'what':<50} {'tokens':>11} {'wall s':>7} {'tokens/s':>10} {'cpu s':>7}")
    for method, (n, timer) in ceilings.items():
        print(f"{'ceiling: tokenizers.' + method + ' (in memory)':<50} {n:>11,} {timer.wall:>7.2f} "
              f"{n / timer.wall:>10,.0f} {timer.cpu:>7.2f}")
    label = f"ours: Spark {args.master} read+encode+write, {len(stats['shards'])} shards"
    print(f"{label:<50} {ours_tokens:>11,} {ours.wall:>7.2f} {ours_tokens / ours.wall:>10,.0f} {ours.cpu:>7.2f}")
    ratio = (ours_tokens / ours.wall) / (ceiling_tokens / ceiling.wall)
    # (ours' cpu s counts this process only: Spark's Python workers are the JVM's children)
    print(f"ratio ours / encode_batch_fast ceiling: {ratio:.2f}x wall-clock (target >= {TARGET_RATIO}x); "
          "same token count: yes")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (wall-clock ratios are noisy on a busy machine)")


class Timer:
    """Wall and CPU seconds of this process and its finished children (the worker pool)."""

    def __enter__(self):
        self._start = (time.perf_counter(), _cpu())
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self._start[0]
        self.cpu = _cpu() - self._start[1]


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
