"""The per-domain table and bpb plot a run shows (training_run and scaling_run share them)."""

import dagster as dg

from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT
from marin_assets.core.storage import Storage
from marin_assets.lineage.recording import plot_previews
from marin_assets.train import domain_report
from marin_assets.train.report import DOMAIN_PLOT_FILE, domain_metadata

DOMAINS = [
    {"domain": "all", "kind": "mixture", "documents": 40, "tokens": 4000, "bytes": 9000, "loss": 4.5, "bpb": 2.885},
    {"domain": "code", "kind": "source", "documents": 20, "tokens": 2500, "bytes": 5000, "loss": 4.0, "bpb": 2.885,
     "eval_tokens": 2400.0},
    {"domain": "handbook_passages", "kind": "eval_set", "documents": 7, "tokens": 600, "bytes": 2100, "loss": 5.123456,
     "bpb": 2.111, "eval_tokens": 590.0},
    {"domain": "empty", "kind": "source", "documents": 0, "tokens": 0, "bytes": 0, "loss": float("nan"), "bpb": None},
]


def test_rows_keep_the_table_columns_in_order():
    rows = domain_report.table_rows(DOMAINS)
    assert [list(r) for r in rows] == [domain_report.COLUMNS] * len(DOMAINS)
    assert [r["kind"] for r in rows] == ["mixture", "source", "eval_set", "source"]
    assert "eval_tokens" not in rows[1]


def test_plot_has_a_bar_per_domain_with_a_bpb_and_none_without_any():
    png = domain_report.bpb_plot_png(DOMAINS)
    assert png.startswith(b"\x89PNG") and png == domain_report.bpb_plot_png(DOMAINS)  # deterministic bytes
    assert domain_report.bpb_plot_png([{**DOMAINS[3]}]) is None


def test_plot_legend_names_each_colour_kind():
    rows = [r for r in DOMAINS if r.get("bpb") is not None]
    legend = domain_report.bpb_figure(rows).axes[0].get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == sorted({r["kind"] for r in rows})


def test_metadata_is_a_table_an_inline_plot_and_the_missing_eval_sets(tmp_path):
    storage = Storage(str(tmp_path))
    evaluation = {"domains": DOMAINS, "eval_sets_missing": {"mmlu_tiny": "eval_set[mmlu_tiny] is not materialized"}}
    with storage.atomic_dir("training", "r", "final") as staged:
        meta = domain_metadata(staged, evaluation, None)
    table = meta["domains"]
    assert isinstance(table, dg.TableMetadataValue)
    assert [c.name for c in table.schema.columns] == domain_report.COLUMNS
    by_domain = {r.data["domain"]: r.data for r in table.records}
    assert by_domain["handbook_passages"] == {"domain": "handbook_passages", "kind": "eval_set", "documents": 7,
                                              "tokens": 600, "bytes": 2100, "loss": 5.123, "bpb": 2.111}
    assert meta["domain_bpb_plot"].value.startswith("![bpb by domain](data:image/png;base64,")
    inline = plot_previews(meta)["domain_bpb_plot (preview)"].value  # what record_output shows first
    assert inline.startswith("![domain_bpb_plot](data:image/png;base64,") and len(inline) < INLINE_MARKDOWN_LIMIT
    assert (tmp_path / "training" / "r" / "final" / DOMAIN_PLOT_FILE).read_bytes().startswith(b"\x89PNG")
    assert meta["eval_sets_missing"].value == "mmlu_tiny: eval_set[mmlu_tiny] is not materialized"
    assert meta["domain_eval_error"].value == "none"


def test_a_run_without_domains_says_so():
    meta = domain_metadata(None, {"domains": []}, "RuntimeError: boom")
    assert meta["domain_eval_error"].value == "RuntimeError: boom" and "domain_bpb_plot" not in meta
    assert meta["domains"].records == [] and meta["eval_sets_missing"].value == "none"
