"""HTML extraction quality against a gold standard: ours vs resiliparse and trafilatura, one run.

Pages and ground truth: the Scrapinghub/Zyte article-extraction benchmark (181 news pages), read
from $MARIN_EXTRACTION_BENCHMARK or shared/datasets/article-extraction-benchmark in a folder above
the repo; never copied into it. Metric as the benchmark's README describes its evaluate.py: 4-gram
shingles of \\w+ tokens compared as multisets, TP/FP/FN normalised per page, precision and recall
averaged over pages, F1 = harmonic mean of the two averages; +/- = std over seeded bootstrap resamples.

Every extractor sees the page as the cleaning job does (decode_html, then normalize_text on the
output). Timing is per page and interleaved (each page runs through every extractor before the
next page), so load from other processes hits all of them alike. Extractors:
- ours: the configured default of recipes/cleaning.yaml (what a web source gets);
- resiliparse: our resiliparse extractor with its default options (main content, no comments, no post meta);
- resiliparse (library defaults, main_content=True): the plain call, for reference;
- trafilatura: trafilatura.extract(html, include_comments=False), as the benchmark runs it (the peer);
- trafilatura fast: the same with no_fallback=True (what our fallback calls).
Target: ours F1 >= trafilatura's F1, at <= 1/3 of trafilatura's ms/page.

    .venv/bin/python benchmarks/extraction_quality.py [--data DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from marin_assets.data.extract.extractor_choice import ExtractionSettings, build_extractor
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.formats.html import decode_html
from marin_assets.data.clean.normalize import normalize_text

DATASET = Path("shared/datasets/article-extraction-benchmark")
TOKEN = re.compile(r"\w+")
N_BOOTSTRAP = 1000


def find_data(explicit: str | None) -> Path | None:
    if explicit or os.environ.get("MARIN_EXTRACTION_BENCHMARK"):
        return Path(explicit or os.environ["MARIN_EXTRACTION_BENCHMARK"])
    for parent in Path(__file__).resolve().parents:
        if (parent / DATASET / "ground-truth.json").exists():
            return parent / DATASET
    return None


def shingles(text: str) -> Counter:
    tokens = TOKEN.findall(text or "")
    if len(tokens) < 4:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(zip(tokens, tokens[1:], tokens[2:], tokens[3:]))


def page_counts(truth: str, pred: str) -> tuple[float, float, float]:
    """(TP, FP, FN) over shingle multisets, divided by their sum so every page weighs the same."""
    t, p = shingles(truth), shingles(pred)
    tp, fp, fn = sum((t & p).values()), sum((p - t).values()), sum((t - p).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp, fp, fn):
    return 1.0 if fp == fn == 0 else tp / (tp + fp)


def _recall(tp, fp, fn):
    return 1.0 if fp == fn == 0 else tp / (tp + fn)


def scores(counts: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """(F1, precision, recall): pages with an empty prediction are out of the precision average."""
    precision = statistics.mean(_precision(*c) for c in counts if c[0] + c[1] > 0)
    recall = statistics.mean(_recall(*c) for c in counts if c[0] + c[2] > 0)
    return 2 * precision * recall / (precision + recall), precision, recall


def bootstrap_std(counts, seed: int = 0) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    samples = [scores([counts[i] for i in rng.integers(0, len(counts), len(counts))]) for _ in range(N_BOOTSTRAP)]
    return tuple(float(np.std(column, ddof=1)) for column in zip(*samples))


def load_pages(root: Path, limit: int | None) -> list[tuple[str, str, str]]:
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(truth)[:limit]:
        html, _ = decode_html(gzip.decompress((root / "html" / f"{page_id}.html.gz").read_bytes()))
        pages.append((page_id, html or "", truth[page_id]["articleBody"]))
    return pages


def extractors() -> dict:
    import trafilatura
    from resiliparse.extract.html2text import extract_plain_text

    settings = load_cleaning_recipe().extraction
    resiliparse = ExtractionSettings(extractors={"r": {"kind": "resiliparse"}}, default="r")
    return {
        f"ours ({settings.default})": build_extractor(settings, settings.default).extract,
        "resiliparse (our options)": build_extractor(resiliparse, "r").extract,
        "resiliparse (main_content=True)": lambda h: extract_plain_text(h, main_content=True),
        "trafilatura (include_comments=False)": lambda h: trafilatura.extract(h, include_comments=False) or "",
        "trafilatura fast (no_fallback=True)": lambda h: trafilatura.extract(h, include_comments=False,
                                                                             no_fallback=True) or "",
    }  # fmt: skip


def run(pages, named) -> dict[str, dict]:
    for extract in named.values():  # warm-up: imports, caches
        for _, html, _ in pages[:3]:
            extract(html)
    times = {name: [] for name in named}
    counts = {name: [] for name in named}
    for _, html, truth in pages:
        for name, extract in named.items():
            start = time.perf_counter()
            text = extract(html)
            times[name].append((time.perf_counter() - start) * 1000)
            counts[name].append(page_counts(truth, normalize_text(text)))
    results = {}
    for name in named:
        f1, p, r = scores(counts[name])
        results[name] = {"f1": f1, "precision": p, "recall": r, "std": bootstrap_std(counts[name]),
                         "ms_mean": statistics.mean(times[name]), "ms_median": statistics.median(times[name])}  # fmt: skip
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="benchmark folder (default: $MARIN_EXTRACTION_BENCHMARK or ../shared/...)")
    parser.add_argument("--limit", type=int, help="first N pages only (quick look; targets need all)")
    args = parser.parse_args()
    root = find_data(args.data)
    if root is None or not (root / "ground-truth.json").exists():
        print(f"SKIP: extraction benchmark not found (set MARIN_EXTRACTION_BENCHMARK or place {DATASET} "
              "in a folder above the repo)")  # fmt: skip
        return 0
    pages = load_pages(root, args.limit)
    named = extractors()
    print(f"{len(pages)} pages from {root}")
    results = run(pages, named)
    print(f"{'extractor':42s} {'F1':>13s} {'precision':>13s} {'recall':>13s} {'ms/page mean':>13s} {'median':>7s}")
    for name, m in results.items():
        sf, sp, sr = m["std"]
        print(f"{name:42s} {m['f1']:.3f} ± {sf:.3f} {m['precision']:.3f} ± {sp:.3f} {m['recall']:.3f} ± {sr:.3f} "
              f"{m['ms_mean']:13.2f} {m['ms_median']:7.2f}")  # fmt: skip
    ours = next(iter(results.values()))
    peer = results["trafilatura (include_comments=False)"]
    speed = peer["ms_mean"] / ours["ms_mean"]
    f1_ok, speed_ok = ours["f1"] >= peer["f1"], speed >= 3
    print(f"ours vs trafilatura: F1 {ours['f1']:.3f} vs {peer['f1']:.3f} ({ours['f1'] - peer['f1']:+.3f}), "
          f"ms/page {ours['ms_mean']:.2f} vs {peer['ms_mean']:.2f} ({speed:.1f}x faster)")  # fmt: skip
    print(f"target F1 >= trafilatura: {'MET' if f1_ok else 'NOT MET'}; "
          f"target <= 1/3 of its time: {'MET' if speed_ok else 'NOT MET'}")  # fmt: skip
    return 0 if f1_ok and speed_ok else 1


if __name__ == "__main__":
    sys.exit(main())
