"""Quality-filter decisions and time of two code trees on the same documents: identical keep/reject + reason?

Runs `run_filters(text, shipped recipe's filters)` per document in a fresh process per code tree (the
tree's root first on sys.path), alternating the trees round by round, and compares per document the
decision, the rule, the recorded value and the kept text. Documents: the shipped sample (read,
extracted and normalised as the cleaner does), benchmarks/corpus.py and benchmarks/peer_corpus.py.

    .venv/bin/python benchmarks/compare_filter_decisions.py --before /tmp/before --after . --docs 5000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def sample_docs() -> list[dict]:
    from marin_assets.data.clean.normalize import normalize_text
    from marin_assets.data.extract.extractor_choice import html_to_text
    from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
    from marin_assets.data.sources.source_registry import load_sources

    docs = []
    for spec in load_sources().sources:
        for path in list_source_files(spec):
            for rec in read_file(path, spec):
                if isinstance(rec, RawRecord):
                    text = html_to_text(rec.content) if rec.content_type == "html" else rec.content
                    docs.append({"id": f"sample-{len(docs)}", "text": normalize_text(text)})
    return docs


def build_docs(n_docs: int, folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus import build_corpus
    from peer_corpus import load_or_build

    docs = sample_docs()
    docs += [{**d, "id": f"corpus-{d['id']}"} for d in build_corpus(n_docs, folder / "corpus_shards")]
    docs += [{"id": d["id"], "text": d["text"]} for d in load_or_build(n_docs)]
    path = folder / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def decide(docs_path: str, out_path: str) -> None:
    """In the code tree first on sys.path: every document's decision, and the filter time."""
    import time

    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.filters.pipeline import run_filters

    settings = load_cleaning_recipe().filters
    docs = [json.loads(line) for line in open(docs_path)]
    for d in docs[:200]:  # warm-up: lazy tables, first-call caches
        run_filters(d["text"], settings)
    start, cpu = time.perf_counter(), time.process_time()
    outcomes = [run_filters(d["text"], settings) for d in docs]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = [{"id": d["id"], "reason": o.reason, "value": None if o.value is None else str(o.value),
             "text": hashlib.sha1(o.text.encode()).hexdigest(), "line_removed": o.stats.get("line_removed_chars")}
            for d, o in zip(docs, outcomes)]  # fmt: skip
    Path(out_path).write_text(json.dumps({"seconds": seconds, "cpu": cpu, "rows": rows}))


def run_tree(root: Path, docs: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root.resolve())}
    subprocess.run([sys.executable, __file__, "--decide", str(docs), str(out)], env=env, check=True, cwd=root)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="root of the code tree before the change")
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--docs", type=int, default=5000, help="documents from each generated corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decide", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decide:
        return decide(*args.decide)
    work = Path(tempfile.mkdtemp(prefix="filter_decisions_"))
    docs = build_docs(args.docs, work)
    times: dict[str, list[float]] = {"before": [], "after": []}
    cpu: dict[str, list[float]] = {"before": [], "after": []}  # CPU seconds: less swayed by other load
    results = {}
    for i in range(args.rounds):
        for side, root in (("before", args.before), ("after", args.after))[:: 1 if i % 2 == 0 else -1]:
            results[side] = run_tree(root, docs, work / f"{side}.json")
            times[side].append(results[side]["seconds"])
            cpu[side].append(results[side]["cpu"])
            print(f"round {i + 1} {side}: {times[side][-1]:.2f} s wall, {cpu[side][-1]:.2f} s CPU, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
    before, after = results["before"]["rows"], results["after"]["rows"]
    decisions = [(b["id"], b["reason"], a["reason"]) for b, a in zip(before, after) if b["reason"] != a["reason"]]
    texts = sum(b["text"] != a["text"] for b, a in zip(before, after))
    values = [(b["id"], b["reason"], b["value"], a["value"]) for b, a in zip(before, after) if b["value"] != a["value"]]
    stats = sum(b["line_removed"] != a["line_removed"] for b, a in zip(before, after))
    print(f"{len(before)} documents ({sum(b['reason'] is None for b in before)} kept): "
          f"{len(decisions)} decisions or reasons differ, {texts} kept texts differ, {stats} line stats differ, "
          f"{len(values)} recorded values differ")  # fmt: skip
    for row in decisions[:10] + values[:10]:
        print("  ", row)
    b, a = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"filter time, median of {args.rounds}: before {b:.2f} s, after {a:.2f} s ({a / b - 1:+.1%}) wall")
    b, a = statistics.median(cpu["before"]), statistics.median(cpu["after"])
    print(f"filter time, median of {args.rounds}: before {b:.2f} s, after {a:.2f} s ({a / b - 1:+.1%}) CPU")
    if decisions or texts:
        sys.exit(1)


if __name__ == "__main__":
    main()
