"""The data report's figures as PNG bytes (matplotlib Agg through core.plotting)."""

from __future__ import annotations

import io

from marin_assets.core.plotting import pyplot


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})  # no version stamp
    pyplot().close(fig)
    return buffer.getvalue()


def funnel_png(report: dict) -> bytes:
    plt = pyplot()
    stages = report["funnel"]
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(stages) + 1))
    ax.barh([s["stage"] for s in stages][::-1], [s["remaining"] for s in stages][::-1], color="#4c72b0")
    for i, s in enumerate(stages[::-1]):
        ax.text(s["remaining"], i, f" {s['remaining']} (-{s['removed']})", va="center", fontsize=8)
    ax.set_xlabel("documents remaining after each stage")
    ax.set_title(f"{report['source']}: cleaning funnel")
    return _png(fig)


def lengths_png(report: dict) -> bytes:
    """Kept and rejected on the same log bins (report.length_histograms), on a numeric log axis."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3))
    for name, color, hatch in (("kept", "#4c72b0", None), ("rejected", "#dd8452", "//")):
        bins = report["length_histogram"][name]
        if bins:
            edges = [b["from"] for b in bins] + [bins[-1]["to"]]
            ax.stairs([b["documents"] for b in bins], edges, fill=True, alpha=0.5, color=color, hatch=hatch,
                      label=f"{name} ({sum(b['documents'] for b in bins)})")
    ax.set_xscale("log")
    ax.set_xlabel("document length (characters, log scale; same bins for kept and rejected)")
    ax.set_ylabel("documents")
    ax.legend()
    return _png(fig)


def languages_png(report: dict) -> bytes:
    plt = pyplot()
    langs = report["languages"]
    # most documents first, ties by name: a set's order changes between processes (string hashing)
    names = sorted(set(langs["kept"]) | set(langs["rejected"]),
                   key=lambda k: (-(langs["kept"].get(k, 0) + langs["rejected"].get(k, 0)), k))[:15]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.bar(names, [langs["kept"].get(n, 0) for n in names], label="kept", color="#4c72b0")
    ax.bar(names, [langs["rejected"].get(n, 0) for n in names], bottom=[langs["kept"].get(n, 0) for n in names],
           label="rejected", color="#dd8452")  # fmt: skip
    ax.set_ylabel("documents")
    ax.set_title("identified language")
    ax.legend()
    return _png(fig)


FIGURES = {"funnel": funnel_png, "lengths": lengths_png, "languages": languages_png}
