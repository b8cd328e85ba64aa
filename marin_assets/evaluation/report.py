"""A downstream evaluation shown summary first: the overall numbers, a per-category table, and a bar plot
of the run's accuracy next to the task set's published baselines and chance (pure; the asset adds Dagster)."""

from __future__ import annotations

from marin_assets.core.plotting import pyplot

COLUMNS = ("acc", "centered_acc", "correct_prob_norm", "correct_logprob", "bpb", "items", "ties")


def _cell(value) -> str:
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def summary_table(summary: dict) -> str:
    """Markdown: overall first, then each category (mean over its tasks), then the published baselines."""
    head = "| | " + " | ".join(COLUMNS) + " |\n|---|" + "---|" * len(COLUMNS) + "\n"
    rows = [("**overall**", summary["overall"]), *summary["categories"].items()]
    body = "".join(f"| {name} | " + " | ".join(_cell(m[c]) for c in COLUMNS) + " |\n" for name, m in rows)
    if summary["baselines"]:
        body += "\nPublished overall accuracy: " + ", ".join(
            f"{model} {acc:.3f}" for model, acc in summary["baselines"].items()) + "\n"
    return head + body


def accuracy_plot_png(summary: dict, title: str) -> bytes:
    """Bars: this run's overall accuracy, the published baselines, and the random baseline as a line."""
    import io

    plt = pyplot()
    names = ["this run", *summary["baselines"]]
    values = [summary["overall"]["acc"], *summary["baselines"].values()]
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    ax.bar(names, values, color=["tab:blue"] + ["tab:gray"] * (len(names) - 1))
    ax.axhline(summary["overall"]["random"], color="tab:red", linestyle="--", label="random")
    for x, v in enumerate(values):
        ax.text(x, v + 0.01, f"{v:.3f}", ha="center", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=20, fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()
