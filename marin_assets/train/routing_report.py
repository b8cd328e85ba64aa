"""An MoE run's routing as table rows (layer x expert shares, dropped fraction) and a heat map. Pure."""

from __future__ import annotations

import io

from marin_assets.core.plotting import pyplot


def table_rows(stats: dict) -> list[dict]:
    """One row per MoE layer: each expert's share of the routed tokens and the dropped fraction."""
    rows = []
    for layer in stats.get("layers", []):
        row = {"layer": layer["layer"]}
        row.update({f"expert_{e}": round(s, 4) for e, s in enumerate(layer["shares"])})
        row["dropped_fraction"] = round(layer["dropped_fraction"], 4)
        rows.append(row)
    return rows


def heatmap_png(stats: dict, title: str = "share of routed tokens per expert") -> bytes | None:
    layers = stats.get("layers") or []
    if not layers:
        return None
    shares = [layer["shares"] for layer in layers]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(3.2, 0.6 * len(shares[0]) + 2), max(2.2, 0.5 * len(shares) + 1.4)), dpi=100)
    image = ax.imshow(shares, cmap="viridis", vmin=0, vmax=max(max(r) for r in shares), aspect="auto")
    for y, row in enumerate(shares):
        for x, share in enumerate(row):
            ax.text(x, y, f"{share:.2f}", ha="center", va="center", color="white", fontsize=7)
    ax.set_xticks(range(len(shares[0])))
    ax.set_yticks(range(len(shares)))
    ax.set_xlabel("expert")
    ax.set_ylabel("MoE layer")
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.05)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
