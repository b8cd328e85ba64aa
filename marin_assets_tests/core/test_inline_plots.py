"""Plots in metadata come first: the full plot (one click), then an inline preview under the 1,000-char limit
(legible where drawn from the data, core/line_preview.py; a shape-only thumbnail otherwise)."""

import base64
import io

import dagster as dg
from PIL import Image

from marin_assets.core.line_preview import line_preview_markdown, preview_key
from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT, inline_thumbnail_markdown, pyplot
from marin_assets.lineage.recording import plot_previews


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


def y_label_heights(image: Image.Image) -> list[int]:
    """Heights (px) of the text left of the y axis: the axis is the leftmost column that is dark for
    over half the image's height; each run of rows with a dark pixel left of it is one label."""
    grey = image.convert("L")
    dark = lambda x, y: grey.getpixel((x, y)) < 128  # noqa: E731
    axis = next(x for x in range(grey.width) if sum(dark(x, y) for y in range(grey.height)) > grey.height / 2)
    rows = [any(dark(x, y) for x in range(max(0, axis - 2))) for y in range(grey.height)]
    heights, run = [], 0
    for inked in rows + [False]:
        if inked:
            run += 1
        elif run:
            heights.append(run)
            run = 0
    return heights


def test_the_loss_curve_preview_is_legible_at_the_size_shown():
    """training_run's preview: drawn from the curves, >= 280 px wide, its axis values >= 8 px tall, inline."""
    from marin_assets_tests.ui.plot_materializations import training_run_metadata

    plot_key, metadata = training_run_metadata()
    preview = metadata[preview_key(plot_key)].value
    assert len(preview) < INLINE_MARKDOWN_LIMIT  # drawn in the table, no click
    image = thumbnail_image(preview.split("\n")[0])
    assert image.width >= 280 and image.height >= 100
    heights = y_label_heights(image)
    assert len(heights) == 2 and min(heights) >= 8, heights  # the top and bottom loss values
    assert "eval loss" in preview  # which line is which: Markdown text under the image


def test_a_long_noisy_curve_still_fits_legibly():
    import math

    curve = [(s, 6 * math.exp(-s / 300) + 2 + 0.05 * math.sin(s)) for s in range(0, 20001, 10)]
    markdown = line_preview_markdown([curve], [[(10000, 2.3), (20000, 2.2)]], "loss", "steps", caption="x")
    assert markdown is not None and len(markdown) < INLINE_MARKDOWN_LIMIT
    image = thumbnail_image(markdown.split("\n")[0])
    assert image.width >= 280 and min(y_label_heights(image)) >= 8


def test_thumbnail_text_is_not_legible_which_is_why_curves_get_a_drawn_preview():
    """The measure itself: a thumbnail of the matplotlib plot (what a plot without data gets) has 2-4 px text."""
    image = thumbnail_image(inline_thumbnail_markdown(loss_plot(), alt="loss"))
    assert image.width < 280 and max(y_label_heights(image)) < 8
