"""Plots in metadata come first: the full plot (one click), then an inline preview under the 1,000-char limit."""

import base64
import io

import dagster as dg
from PIL import Image

from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT, inline_thumbnail_markdown, pyplot
from marin_assets.resources.recording import plot_previews


def png_of(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    pyplot().close(fig)
    return buf.getvalue()


def thumbnail_image(markdown: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(markdown.split(",", 1)[1].rstrip(")"))))


def loss_plot() -> bytes:
    fig, ax = pyplot().subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(range(100), [5 - i / 30 for i in range(100)], label="train loss")
    ax.set_title("a run")
    ax.legend()
    return png_of(fig)


def test_thumbnail_is_a_real_small_png_under_the_inline_limit():
    markdown = inline_thumbnail_markdown(loss_plot(), alt="loss")
    assert markdown.startswith("![loss](data:image/png;base64,") and len(markdown) < INLINE_MARKDOWN_LIMIT
    image = thumbnail_image(markdown)
    assert image.width >= 160 and image.height >= 80


def square_fit_plot() -> bytes:
    """Like scaling's fit_vs_observed: square, log axes, a curve per budget and a legend."""
    fig, ax = pyplot().subplots(figsize=(5, 4.8), dpi=100)
    for budget in range(3):
        xs = [10 ** (4 + i / 4) for i in range(12)]
        ax.plot(xs, [3 + budget / 3 + (i - 6) ** 2 / 40 for i in range(12)], "o-", label=f"C = 1e{10 + budget}")
    ax.set_xscale("log"), ax.set_title("fit vs observed"), ax.legend()
    return png_of(fig)


def test_a_square_busy_plot_still_gets_an_inline_thumbnail():
    markdown = inline_thumbnail_markdown(square_fit_plot(), alt="fit_vs_observed")
    assert markdown is not None and len(markdown) < INLINE_MARKDOWN_LIMIT
    image = thumbnail_image(markdown)
    assert image.width >= 120 and image.height >= 110


def test_previews_are_made_for_plot_values_only():
    png = base64.b64encode(loss_plot()).decode()
    metadata = {"loss_curve_plot": dg.MetadataValue.md(f"![loss curve](data:image/png;base64,{png})"),
                "notes": dg.MetadataValue.md("just text"), "n": dg.MetadataValue.int(3)}
    previews = plot_previews(metadata)
    # the full plot first (its [Show Markdown] opens it legibly), then the thumbnail that fits inline
    assert list(previews) == ["loss_curve_plot", "loss_curve_plot (preview)"]
    assert previews["loss_curve_plot"] is metadata["loss_curve_plot"]
    assert len(previews["loss_curve_plot (preview)"].value) < INLINE_MARKDOWN_LIMIT


def test_a_legible_preview_cannot_fit_the_inline_limit_so_the_full_plot_comes_first():
    """Why previews are thumbnails behind the full plot: even 2 greys at 400 px (text-legible) exceed 1,000 chars."""
    source = Image.open(io.BytesIO(loss_plot())).convert("L")
    legible = source.resize((400, round(source.height * 400 / source.width)), Image.LANCZOS).quantize(2)
    out = io.BytesIO()
    legible.save(out, format="PNG", optimize=True, bits=1)
    assert legible.mode == "P" and len(base64.b64encode(out.getvalue())) > INLINE_MARKDOWN_LIMIT
