"""A source's data report (pure): the cleaning funnel, histograms, rejection reasons, duplicate clusters.

Built from what cleaned_documents wrote (stats.json, documents and rejected rows); figures are drawn
by report_plots, the Markdown here embeds them, so the report reads the same in the UI and on disk.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable

import numpy as np

from marin_assets.data.curate.decontamination_step import hits_per_item
from marin_assets.data.dedup.dedup_keys import MinHasher, band_key_matrix, cluster_representatives, exact_key, lsh_star_edges

# Funnel order: the steps of the cleaning job, by the rule prefix of their rejection reasons.
STAGE_ORDER = ["quarantine", "http_status", "extraction_failed", "empty_text", "language", "gopher_repetition",
               "gopher_quality", "c4", "fineweb", "decontamination", "quality_classifier", "dedup"]  # fmt: skip
EXAMPLES_PER_REASON = 3
MAX_ROWS_FOR_CLUSTERS = 200_000  # duplicate clusters are recomputed in memory: only for modest sources


def stage_of(reason: str) -> str:
    return reason.split(":", 1)[0]


def rule_rows(stats: dict) -> list[dict]:
    """One row per rejection rule: its stage, documents it rejected, their share of the records read."""
    total = stats["records_in"] or 1  # an empty source rejects nothing: no division by zero
    ordered = sorted(stats["rejected_by_rule"].items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"rule": rule, "stage": stage_of(rule), "rejected": int(n), "share": n / total} for rule, n in ordered]


def funnel(stats: dict) -> list[tuple[str, int, int]]:
    """(stage, removed by it, remaining after it), starting from the records read."""
    by_stage = Counter()
    for reason, n in stats["rejected_by_rule"].items():
        by_stage[stage_of(reason)] += n
    order = [s for s in STAGE_ORDER if s != "quarantine" and s != "dedup"]
    order += sorted(set(by_stage) - set(STAGE_ORDER)) + ["dedup"]  # new rules before dedup, which runs last
    remaining = stats["records_in"] - stats["quarantined"]
    rows = [("read", 0, stats["records_in"]), ("quarantine", stats["quarantined"], remaining)]
    if stats.get("ignored"):  # places that hold no record (blank lines): not documents, not quarantined
        remaining -= stats["ignored"]
        rows.append(("ignored", stats["ignored"], remaining))
    for stage in order:
        if by_stage.get(stage):
            remaining -= by_stage[stage]
            rows.append((stage, by_stage[stage], remaining))
    return rows


def top_reasons(rejected: Iterable[dict], k: int = 10) -> list[dict]:
    """Most frequent rejection reasons with a few (smallest-id) examples each."""
    counts, examples = Counter(), {}
    for row in sorted(rejected, key=lambda r: r["id"]):
        counts[row["reason"]] += 1
        shown = examples.setdefault(row["reason"], [])
        if len(shown) < EXAMPLES_PER_REASON:
            shown.append({"id": row["id"], "excerpt": " ".join((row["text"] or "").split())[:160]})
    return [{"reason": r, "count": n, "examples": examples[r]} for r, n in counts.most_common(k)]


def languages(rows: Iterable[dict]) -> Counter:
    out = Counter()
    for row in rows:
        out[json.loads(row["metadata"] or "{}").get("language", "unknown")] += 1
    return out


def length_edges(lengths: list[int], bins: int = 12) -> list[int]:
    """log10-spaced bin edges (characters) from 1 to past the longest document."""
    top = max(lengths, default=0) + 1
    return [int(e) for e in np.unique(np.logspace(0, math.log10(max(top, 2)), bins + 1).round().astype(int))]


def length_histogram(lengths: list[int], edges: list[int]) -> list[dict]:
    """Counts per bin [from, to); an empty text (length 0) counts in the first bin, none is dropped."""
    if not lengths:
        return []
    counts, _ = np.histogram(np.clip(lengths, edges[0], edges[-1] - 1), bins=edges)
    return [{"from": int(a), "to": int(b), "documents": int(c)} for a, b, c in zip(edges[:-1], edges[1:], counts)]


def length_histograms(kept: list[int], rejected: list[int]) -> dict[str, list[dict]]:
    """Kept and rejected lengths over the same bins, so the two can be compared bin by bin."""
    edges = length_edges(kept + rejected)
    return {"kept": length_histogram(kept, edges), "rejected": length_histogram(rejected, edges)}


BAR_WIDTH = 10  # characters of the longest bar: the UI's metadata column shows about 30


def funnel_bars(report: dict) -> str:
    """The funnel as a Markdown table with text bars: legible at any size, short enough to show inline."""
    stages = report["funnel"]
    top = max((s["remaining"] for s in stages), default=0) or 1
    rows = [[s["stage"], s["remaining"], f"-{s['removed']}" if s["removed"] else "",
             "█" * round(BAR_WIDTH * s["remaining"] / top) or "▏"] for s in stages]  # numbers first: never clipped
    return _table(["stage", "remaining", "removed", "plot"], rows)


def duplicate_cluster_sizes(kept: list[dict], duplicates: list[dict], dedup) -> dict[int, int] | None:
    """{cluster size: clusters} of the run's duplicate clusters (size >= 2), as the job formed them.

    Recomputed from the texts with the recipe's dedup settings: exact keys first, then LSH on the
    survivors. None when the source is too large to do this in memory.
    """
    rows = sorted(kept + duplicates, key=lambda r: r["id"])
    if len(rows) > MAX_ROWS_FOR_CLUSTERS:
        return None
    parent: dict[str, str] = {}
    if dedup.exact:
        first: dict[str, str] = {}
        for row in rows:
            key = exact_key(row["text"])
            parent[row["id"]] = first.setdefault(key, row["id"])
    survivors = [r for r in rows if parent.get(r["id"], r["id"]) == r["id"]]
    if dedup.near and survivors:
        signatures, has_words = MinHasher(dedup.num_perm, dedup.shingle_size, dedup.seed, dedup.hash_family).signatures(
            [r["text"] for r in survivors]
        )
        keys = band_key_matrix(signatures, dedup.bands, dedup.rows)
        with_words = np.flatnonzero(has_words)
        edges = lsh_star_edges(keys[with_words])
        ids = [survivors[i]["id"] for i in with_words]
        near = cluster_representatives((ids[a], ids[b]) for a, b in edges)
        for member, rep in near.items():
            parent[member] = rep
    root = {}
    for row_id in parent:  # exact duplicates of a near-duplicate survivor join its cluster
        rep = parent[row_id]
        root[row_id] = parent.get(rep, rep) if rep != row_id else row_id
    sizes = Counter(Counter(root.values()).values())
    return {size: n for size, n in sorted(sizes.items()) if size > 1}


def build_report(source: str, stats: dict, kept: list[dict], rejected: list[dict], dedup) -> dict:
    """Everything the report shows, as JSON-ready values."""
    duplicates = [r for r in rejected if stage_of(r["reason"]) == "dedup"]
    scores = [r["quality_score"] for r in kept if r.get("quality_score") is not None]
    counts = stats.get("curation_counts", {})
    return {
        "source": source,
        "records_in": stats["records_in"], "kept": stats["kept"], "rejected": stats["rejected"],
        "quarantined": stats["quarantined"],
        "funnel": [{"stage": s, "removed": r, "remaining": n} for s, r, n in funnel(stats)],
        "quarantined_by_reason": stats.get("quarantined_by_reason", {}),
        "top_rejected_reasons": top_reasons(rejected),
        "length_histogram": length_histograms([len(r["text"] or "") for r in kept],
                                              [len(r["text"] or "") for r in rejected]),
        "languages": {"kept": dict(languages(kept).most_common()), "rejected": dict(languages(rejected).most_common())},
        "duplicate_cluster_sizes": duplicate_cluster_sizes(kept, duplicates, dedup),
        "pii": {k.split(":", 1)[1]: n for k, n in counts.items() if k.startswith("pii:")},
        "decontamination": {k: n for k, n in counts.items() if k.startswith("decontamination") and ":item[" not in k},
        "decontamination_items": hits_per_item(counts, stats.get("curation_examples", {})),
        "quality_scores": {"scored": len(scores), "mean": round(sum(scores) / len(scores), 4) if scores else None,
                           "histogram": np.histogram(scores, bins=10, range=(0, 1))[0].tolist() if scores else []},
    }  # fmt: skip


def _table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(report: dict, images: dict[str, str]) -> str:
    """The report as Markdown; images: name -> link target (a file name, or a data: URI for the UI)."""
    parts = [f"# Data report: {report['source']}",
             f"{report['records_in']} records read: {report['kept']} kept, {report['rejected']} rejected, "
             f"{report['quarantined']} quarantined."]  # fmt: skip
    parts += [f"![{name}]({target})" for name, target in images.items() if name == "funnel"]
    parts.append("## Funnel\n" + _table(["stage", "removed", "remaining"],
                                         [[f["stage"], f["removed"], f["remaining"]] for f in report["funnel"]]))  # fmt: skip
    parts.append("## Top rejected reasons\n" + _table(
        ["reason", "count", "examples"],
        [[r["reason"], r["count"], "; ".join(f"`{e['id']}`: {e['excerpt'][:80]}" for e in r["examples"])]
         for r in report["top_rejected_reasons"]]))  # fmt: skip
    parts += [f"![{name}]({target})" for name, target in images.items() if name != "funnel"]
    clusters = report["duplicate_cluster_sizes"]
    parts.append("## Duplicate clusters\n" + (
        "not computed (source too large for the in-memory recount)" if clusters is None
        else _table(["cluster size", "clusters"], [[s, n] for s, n in clusters.items()]) if clusters else "none"))  # fmt: skip
    parts.append("## PII redacted\n" + (_table(["kind", "count"], [[k, n] for k, n in report["pii"].items()])
                                        if report["pii"] else "none"))  # fmt: skip
    parts.append("## Decontamination\n" + (_table(["count", "n"], [[k, n] for k, n in report["decontamination"].items()])
                                           if report["decontamination"] else "no overlap with any eval set"))  # fmt: skip
    items = report.get("decontamination_items") or []
    if items:  # which eval item, which documents (the smallest ids of those holding it)
        parts.append("### Hits per eval item\n" + _table(
            ["eval set", "item", "documents", "example documents"],
            [[r["eval_set"], r["item"], r["documents"], ", ".join(f"`{d}`" for d in r["example_documents"])]
             for r in items]))  # fmt: skip
    q = report["quality_scores"]
    parts.append(f"## Quality scores\n{q['scored']} documents scored, mean {q['mean']}" if q["scored"] else
                 "## Quality scores\nnot scored")  # fmt: skip
    return "\n\n".join(parts) + "\n"
