"""The per-domain results of one run as rows and a bar plot (Paloma-style), shared by training_run
and scaling_run so both show the same table.

A row per domain: the mixture's whole validation split ("all", kind mixture), each source's part of
it (kind source) and each registered eval set (kind eval_set), with its tokens, UTF-8 bytes, loss
and bits per byte. Pure: the Dagster table value is built from these rows in train.report.
"""

from __future__ import annotations

import io

from marin_assets.core.plotting import pyplot

COLUMNS = ["domain", "kind", "documents", "tokens", "bytes", "loss", "bpb"]
KIND_COLORS = {"mixture": "grey", "source": "tab:blue", "eval_set": "tab:orange"}


def table_rows(domains: list[dict]) -> list[dict]:
    """result.json's `domains` rows reduced to the table's columns, in their order (mixture first)."""
    return [{c: row.get(c) for c in COLUMNS} for row in domains]


def bpb_figure(rows: list[dict]):
    """The bars of bpb per domain, coloured by kind, with a legend naming the kinds."""
    from matplotlib.patches import Patch

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(3.2, 0.7 * len(rows) + 1.5), 3.2), dpi=100)
    ax.bar([r["domain"] for r in rows], [r["bpb"] for r in rows],
           color=[KIND_COLORS.get(r.get("kind"), "black") for r in rows])
    kinds = sorted({str(r.get("kind")) for r in rows})
    ax.legend(handles=[Patch(color=KIND_COLORS.get(k, "black"), label=k) for k in kinds], title="kind",
              fontsize=7, title_fontsize=7)
    ax.set_ylabel("bits per byte")
    ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    return fig


def bpb_plot_png(domains: list[dict], title: str = "bits per byte by domain") -> bytes | None:
    """bpb_figure as PNG bytes; None when no domain has a bpb."""
    rows = [r for r in domains if r.get("bpb") is not None]
    if not rows:
        return None
    fig = bpb_figure(rows)
    fig.axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same bytes each run
    pyplot().close(fig)
    return buf.getvalue()


def missing_summary(eval_sets_missing: dict[str, str]) -> str:
    """One line naming each registered eval set the run could not evaluate, and why."""
    return "; ".join(f"{name}: {why}" for name, why in sorted(eval_sets_missing.items())) or "none"
