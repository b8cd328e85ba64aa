import base64

from marin_assets.scaling import plots
from marin_assets.scaling.isoflop import fit_isoflop
from marin_assets.scaling.parametric import fit_parametric
from marin_assets_tests.scaling.synthetic import isoflop_points

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plots_render_pngs_and_embed_as_markdown():
    points = isoflop_points(budgets=(1e18, 1e19, 1e20), per_budget=5)
    iso = fit_isoflop(points)
    law = fit_parametric(points["N"], points["D"], points["loss"], top_k=5).law
    images = [
        plots.isoflop_curves(points, iso),
        plots.optimal_allocation(iso, [1e21, 1e22], law),
        plots.fit_vs_observed(points, law, {"observed": 2.5, "predicted": 2.45, "relative_error": -0.02}),
    ]
    for png in images:
        assert png.startswith(PNG_MAGIC) and len(png) > 5000
    md = plots.markdown_image(images[0], "isoFLOP")
    assert md.startswith("![isoFLOP](data:image/png;base64,")
    assert base64.b64decode(md.split(",", 1)[1].rstrip(")")) == images[0]


def test_isoflop_x_tick_labels_do_not_overlap():
    """A suite whose sizes span less than a decade (the CPU sample's) labelled every minor tick in full."""
    from marin_assets.core.plotting import pyplot

    points = isoflop_points(budgets=(1e15, 2e15), per_budget=5)
    points = points[(points["N"] > points["N"].min() * 0.99)]
    fig = plots.isoflop_figure(points, fit_isoflop(points))
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in ax.get_xticklabels(which="both")
                    if t.get_visible() and t.get_text()), key=lambda b: b.x0)
    assert len(boxes) >= 2  # numbers on the axis
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:])), [(b.x0, b.x1) for b in boxes]
    pyplot().close(fig)


def test_fit_vs_observed_preview_is_legible_inline():
    """parametric_fit's inline preview: every run as a square, drawn >= 280 px wide with >= 8-px axis values."""
    from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT
    from marin_assets_tests.core.test_inline_plots import thumbnail_image, y_label_heights

    points = isoflop_points(budgets=(1e18, 1e19, 1e20), per_budget=5)
    law = fit_parametric(points["N"], points["D"], points["loss"], top_k=5).law
    markdown = plots.fit_vs_observed_preview(points, law)
    assert markdown is not None and len(markdown) < INLINE_MARKDOWN_LIMIT and "squares: runs" in markdown
    image = thumbnail_image(markdown.split("\n")[0])
    assert image.width >= 280 and image.height >= 100
    assert min(y_label_heights(image)) >= 8
