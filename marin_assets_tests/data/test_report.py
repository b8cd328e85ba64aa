"""The data report's pure parts: funnel order and arithmetic, reasons with examples, duplicate clusters, figures."""

import json

from marin_assets.data.clean.cleaning_recipe import DedupSettings
from marin_assets.data.report.data_report import (
    BAR_WIDTH, build_report, duplicate_cluster_sizes, funnel, funnel_bars, markdown, rule_rows,
)
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.data.report.report_plots import FIGURES
from marin_assets_tests.data.planted_corpus import prose

STATS = {
    "records_in": 20, "kept": 9, "rejected": 9, "quarantined": 2,
    "rejected_by_rule": {"c4:too_few_sentences": 2, "language:fr": 3, "dedup:exact_duplicate": 2,
                         "decontamination:otters": 1, "new_rule:x": 1},
    "curation_counts": {"pii:email": 4, "decontamination[otters]:documents": 2},
}  # fmt: skip


def test_funnel_follows_the_job_order_and_ends_at_kept():
    rows = funnel(STATS)
    assert [r[0] for r in rows] == ["read", "quarantine", "language", "c4", "decontamination", "new_rule", "dedup"]
    assert rows[0][2] == 20 and rows[-1][2] == STATS["kept"]
    assert all(before[2] - after[1] == after[2] for before, after in zip(rows, rows[1:]))


def test_rule_rows_name_stage_count_and_share_largest_first():
    rows = rule_rows(STATS)
    assert rows[0] == {"rule": "language:fr", "stage": "language", "rejected": 3, "share": 0.15}
    assert [r["rule"] for r in rows[1:3]] == ["c4:too_few_sentences", "dedup:exact_duplicate"]  # ties by name
    table = metadata_table(rows)  # what cleaned_documents shows: one table, typed columns
    assert [(c.name, c.type) for c in table.schema.columns] == [
        ("rule", "string"), ("stage", "string"), ("rejected", "int"), ("share", "float")]
    assert [r.data["share"] for r in table.records] == [0.15, 0.1, 0.1, 0.05, 0.05]


def test_duplicate_clusters_join_exact_copies_of_near_duplicates():
    base, other = prose(1), prose(2)
    kept = [{"id": "a", "text": base}, {"id": "z", "text": other}]
    dups = [{"id": "b", "text": base}, {"id": "c", "text": base + " One more."}, {"id": "d", "text": base + " One more."}]
    assert duplicate_cluster_sizes(kept, dups, DedupSettings()) == {4: 1}


def test_report_markdown_and_figures():
    kept = [{"id": f"k{i}", "text": prose(i), "metadata": json.dumps({"language": "en"}), "quality_score": 0.9}
            for i in range(3)]  # fmt: skip
    rejected = [{"id": "r1", "text": "Bonjour le monde", "metadata": json.dumps({"language": "fr"}), "reason": "language:fr"}]
    report = build_report("demo", STATS, kept, rejected, DedupSettings())
    assert report["pii"] == {"email": 4} and report["languages"] == {"kept": {"en": 3}, "rejected": {"fr": 1}}
    assert report["top_rejected_reasons"][0] == {"reason": "language:fr", "count": 1,
                                                 "examples": [{"id": "r1", "excerpt": "Bonjour le monde"}]}  # fmt: skip
    assert report["quality_scores"]["scored"] == 3 and json.dumps(report)
    md = markdown(report, {"funnel": "funnel.png", "lengths": "lengths.png"})
    assert "![funnel](funnel.png)" in md and "| language:fr | 1 |" in md and "| email | 4 |" in md
    for draw in FIGURES.values():
        assert draw(report).startswith(b"\x89PNG")


def test_plots_are_the_same_bytes_in_every_process():
    """Ties between languages are ordered by name: a set's order changes with the process's string hashing."""
    import subprocess
    import sys

    probe = ("import hashlib; from marin_assets.data.report.report_plots import FIGURES; "
             "r = {'languages': {'kept': {'en': 2, 'de': 1}, 'rejected': {'fr': 1, 'la': 1, 'sr': 1, 'zh': 1}}}; "
             "print(hashlib.sha256(FIGURES['languages'](r)).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout.strip()
               for seed in (1, 2, 3)}
    assert len(digests) == 1, digests


def test_kept_and_rejected_lengths_share_bins_and_every_document_is_counted():
    kept = [{"id": f"k{i}", "text": "x" * n, "metadata": "{}"} for i, n in enumerate((5, 40, 300, 2000))]
    rejected = [{"id": "r0", "text": "", "metadata": "{}", "reason": "empty_text"},
                {"id": "r1", "text": "y" * 7, "metadata": "{}", "reason": "c4:too_few_sentences"}]
    hist = build_report("demo", STATS, kept, rejected, DedupSettings())["length_histogram"]
    edges = [(b["from"], b["to"]) for b in hist["kept"]]
    assert edges == [(b["from"], b["to"]) for b in hist["rejected"]]  # one axis for both
    assert edges[0][0] == 1 and edges[-1][1] > 2000 and all(a < b for a, b in edges)
    assert sum(b["documents"] for b in hist["kept"]) == 4
    assert sum(b["documents"] for b in hist["rejected"]) == 2  # the empty text too, in the first bin
    assert hist["rejected"][0]["documents"] >= 1


def test_funnel_bars_are_short_enough_to_show_inline():
    from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT

    report = {"funnel": [{"stage": s, "removed": r, "remaining": n} for s, r, n in funnel(STATS)]}
    text = funnel_bars(report)
    assert len(text) < INLINE_MARKDOWN_LIMIT
    lines = text.splitlines()[2:]
    assert lines[0] == "| read | 20 |  | " + "█" * BAR_WIDTH + " |"  # the longest bar: everything read
    assert lines[-1].startswith("| dedup | 9 | -2 | █")  # ends at kept


def test_rejected_examples_are_shortened_for_the_ui_table():
    from marin_assets.defs.data.clean_assets import SHOWN_CHARS, rejected_examples_table

    long = {"rule": "c4:too_few_sentences", "id": "d1", "url": "https://example.org/" + "p" * 100,
            "excerpt": "word " * 100, "value": None}
    [record] = rejected_examples_table([long]).records
    assert len(record.data["excerpt"]) == SHOWN_CHARS["excerpt"] and record.data["excerpt"].endswith("…")
    assert len(record.data["url"]) == SHOWN_CHARS["url"] and record.data["value"] == ""
    assert record.data["rule"] == "c4:too_few_sentences"  # short values as they are
