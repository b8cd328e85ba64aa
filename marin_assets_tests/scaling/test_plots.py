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
