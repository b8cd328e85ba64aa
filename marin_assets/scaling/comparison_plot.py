"""The dense-vs-MoE plot: loss against training compute for both suites, with each fitted law's frontier. Pure."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from marin_assets.core.plotting import pyplot


def _frontier(law, budgets: np.ndarray) -> np.ndarray:
    return np.array([float(law.loss(*law.compute_optimal(c))) for c in budgets])


def comparison_plot_png(dense: pd.DataFrame, moe: pd.DataFrame, title: str, dense_law=None, moe_law=None) -> bytes:
    """Every run of both suites, each suite's best per budget joined, and its law's L*(C) dashed when fitted."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8), dpi=100)
    c_all = pd.concat([dense["C"], moe["C"]])
    span = np.geomspace(c_all.min() / 1.5, c_all.max() * 1.5, 40)
    for table, law, label, color in ((dense, dense_law, "dense", "tab:blue"),
                                     (moe, moe_law, "MoE (N = active)", "tab:red")):
        ax.scatter(table["C"], table["loss"], color=color, alpha=0.45, s=18)
        best = table.loc[table.groupby("budget")["loss"].idxmin()].sort_values("budget")
        ax.plot(best["C"], best["loss"], "o-", color=color, label=f"{label}: best per budget")
        if law is not None:
            ax.plot(span, _frontier(law, span), "--", color=color, alpha=0.7, label=f"{label}: fitted L*(C)")
    ax.set_xscale("log")
    ax.set_xlabel("training compute C = 6 N D (FLOPs)")
    ax.set_ylabel("final eval loss")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
