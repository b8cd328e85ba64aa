"""PNG plots of the fits (matplotlib, headless), returned as bytes so assets can both save them
under the storage root and embed them in Dagster metadata as base64 Markdown images."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd

from marin_assets.core.line_preview import line_preview_markdown
from marin_assets.core.plotting import pyplot
from marin_assets.scaling.isoflop import IsoflopFit
from marin_assets.scaling.laws import Law


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    pyplot().close(fig)
    return buf.getvalue()


def markdown_image(png: bytes, alt: str) -> str:
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})"


def readable_log_ticks(axis) -> None:
    """At most ~6 labels on a log axis, as 2e+05: a range under a decade otherwise labels every
    minor tick in full (2x10^5, 3x10^5, ...), and the labels overlap."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=6))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0e}".replace("e+0", "e").replace("e-0", "e-")))
    axis.set_minor_formatter(NullFormatter())


def isoflop_figure(points: pd.DataFrame, fit: IsoflopFit):
    """Loss vs N per budget: observed runs, fitted parabola, and its minimum (hollow if unusable)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colors = plt.cm.viridis(np.linspace(0.1, 0.85, max(len(fit.budgets), 1)))
    for color, budget in zip(colors, fit.budgets):
        runs = points[points["budget"] == budget.budget].sort_values("N")
        ax.scatter(runs["N"], runs["loss"], color=color, s=22, label=f"C={budget.budget:.2g} ({budget.status})")
        if budget.coefficients is not None:
            grid = np.linspace(np.log(runs["N"].min()) - 0.2, np.log(runs["N"].max()) + 0.2, 100)
            ax.plot(np.exp(grid), budget.curve(grid), color=color, lw=1.2)
        if budget.N_opt is not None:
            ax.scatter([budget.N_opt], [budget.loss_opt], marker="*", s=140, edgecolor="black",
                       color=color if budget.usable else "none", zorder=3)
    ax.set_xscale("log")
    readable_log_ticks(ax.xaxis)
    ax.set_xlabel("non-embedding parameters N")
    ax.set_ylabel("final eval loss")
    ax.set_title("isoFLOP curves (star: fitted minimum)")
    ax.legend(fontsize=7)
    return fig


def isoflop_curves(points: pd.DataFrame, fit: IsoflopFit) -> bytes:
    return _png(isoflop_figure(points, fit))


def optimal_allocation(fit: IsoflopFit | None, targets: list[float], law: Law | None = None) -> bytes:
    """N*(C) and D*(C): per-budget minima, the isoFLOP power laws (fit None: Approach 2 not fitted), and
    Approach 3 if given."""
    usable = [b for b in fit.budgets if b.usable] if fit is not None else []
    budgets = np.array([b.budget for b in usable]) if usable else np.array(targets) / 100
    span = np.geomspace(budgets.min() / 2, max(targets + [budgets.max()]) * 2, 100)
    fig, axes = pyplot().subplots(1, 2, figsize=(9.6, 3.8))
    for ax, name, observed, power in (
        (axes[0], "N*", [b.N_opt for b in usable], fit.N_law if fit is not None else None),
        (axes[1], "D*", [b.D_opt for b in usable], fit.D_law if fit is not None else None),
    ):
        if power is not None:
            ax.scatter(budgets, observed, color="black", zorder=3, label="isoFLOP minima")
            ax.plot(span, power(span), color="tab:blue", label=f"Approach 2: C^{power.exponent:.3f}")
        if law is not None:
            n_opt, d_opt = law.compute_optimal(span)
            ax.plot(span, n_opt if name == "N*" else d_opt, color="tab:orange", ls="--", label="Approach 3")
        for target in targets:
            ax.axvline(target, color="grey", lw=0.6, ls=":")
        ax.set_xscale("log"), ax.set_yscale("log")
        readable_log_ticks(ax.xaxis)
        ax.set_xlabel("compute C (FLOPs, 6ND)")
        ax.set_ylabel(name)
        ax.legend(fontsize=7)
    fig.suptitle("compute-optimal allocation (dotted: target budgets)")
    return _png(fig)


def fit_vs_observed(points: pd.DataFrame, law: Law, heldout: dict | None = None) -> bytes:
    """Predicted vs observed loss for every run (and the held-out run, if trained)."""
    predicted = law.loss(points["N"], points["D"])
    fig, ax = pyplot().subplots(figsize=(4.8, 4.4))
    ax.scatter(points["loss"], predicted, s=20, color="tab:blue", label="suite runs")
    values = list(points["loss"]) + list(predicted)
    if heldout is not None:
        ax.scatter([heldout["observed"]], [heldout["predicted"]], marker="D", color="tab:red", s=50,
                   label=f"held-out ({heldout['relative_error']:+.2%})")
        values += [heldout["observed"], heldout["predicted"]]
    lo, hi = min(values), max(values)
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    ax.set_xlabel("observed final eval loss")
    ax.set_ylabel("L(N, D) fit")
    params = [f"{k}={v:.3g}" for k, v in law.as_dict().items() if k != "unique_tokens"]
    ax.set_title(f"{law.form}: " + " ".join(params[:3]) + "\n" + " ".join(params[3:]), fontsize=9)
    ax.legend(fontsize=7)
    return _png(fig)


def fit_vs_observed_preview(points: pd.DataFrame, law: Law) -> str | None:
    """fit_vs_observed drawn legibly at the UI's inline size (core/line_preview.py); None if it does not fit."""
    pairs = [(float(o), float(p)) for o, p in zip(points["loss"], law.loss(points["N"], points["D"]))]
    if not pairs:
        return None
    lo, hi = min(min(pair) for pair in pairs), max(max(pair) for pair in pairs)
    return line_preview_markdown([[(lo, lo), (hi, hi)]], [pairs], "fit", "observed",
                                 caption="squares: runs; line: fit = observed",
                                 alt="fit preview")
