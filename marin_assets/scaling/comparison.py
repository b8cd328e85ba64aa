"""Dense vs MoE at equal training compute, and the MoE suite's effective parameter multiplier. Pure.

Both suites count N as active parameters except the input embedding, and C = 6 N D, so their budgets
buy the same compute. `compare` takes each suite's observation table (run, budget, N, D, C, loss) and a
law fitted to the dense suite:
- per budget, the best (lowest) loss of each suite and MoE minus dense;
- per MoE run, the dense-equivalent size N_eff: the N at which the dense law, at the run's D, predicts
  the run's loss (solved on log N by bisection, so any registered law form works). The multiplier
  is N_eff / N_active; its geometric mean over runs is the "effective parameter multiplier".
"""

from __future__ import annotations

import io
import math

import pandas as pd

from marin_assets.core.plotting import pyplot

N_RANGE = (1e0, 1e15)  # where N_eff is searched; outside it the loss is unreachable by the dense law


def dense_equivalent_n(law, loss: float, D: float) -> float | None:
    """The N whose dense-law loss at D equals `loss`; None when no N in N_RANGE reaches it."""
    lo, hi = math.log(N_RANGE[0]), math.log(N_RANGE[1])
    f = lambda log_n: float(law.loss(math.exp(log_n), D)) - loss  # decreasing in N
    if f(lo) < 0 or f(hi) > 0:
        return None
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return math.exp((lo + hi) / 2)


def compare(dense: pd.DataFrame, moe: pd.DataFrame, dense_law) -> dict:
    budgets = []
    for budget in sorted(set(dense["budget"]) & set(moe["budget"])):
        d, m = dense[dense["budget"] == budget], moe[moe["budget"] == budget]
        best_d, best_m = d.loc[d["loss"].idxmin()], m.loc[m["loss"].idxmin()]
        budgets.append({"budget": float(budget), "dense_loss": float(best_d["loss"]), "dense_run": best_d["run"],
                        "moe_loss": float(best_m["loss"]), "moe_run": best_m["run"],
                        "moe_minus_dense": float(best_m["loss"] - best_d["loss"])})
    runs, unreachable = [], []
    for row in moe.itertuples():
        n_eff = dense_equivalent_n(dense_law, row.loss, row.D)
        if n_eff is None:
            unreachable.append(row.run)
            continue
        runs.append({"run": row.run, "budget": float(row.budget), "N_active": float(row.N), "D": float(row.D),
                     "loss": float(row.loss), "N_eff": n_eff, "multiplier": n_eff / row.N})
    multipliers = [r["multiplier"] for r in runs]
    geo = math.exp(sum(map(math.log, multipliers)) / len(multipliers)) if multipliers else None
    return {"budgets": budgets, "runs": runs, "effective_parameter_multiplier": geo,
            "unreachable": unreachable, "dense_law": dense_law.as_dict()}


def comparison_plot_png(dense: pd.DataFrame, moe: pd.DataFrame, title: str) -> bytes:
    """Loss against training compute, every run of both suites, with each suite's best per budget joined."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8), dpi=100)
    for table, label, color in ((dense, "dense", "tab:blue"), (moe, "MoE (N = active)", "tab:red")):
        ax.scatter(table["C"], table["loss"], color=color, alpha=0.45, s=18)
        best = table.loc[table.groupby("budget")["loss"].idxmin()].sort_values("budget")
        ax.plot(best["C"], best["loss"], "o-", color=color, label=f"{label}: best per budget")
    ax.set_xscale("log")
    ax.set_xlabel("training compute C = 6 N D (FLOPs)")
    ax.set_ylabel("final eval loss")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
