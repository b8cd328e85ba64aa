"""matplotlib on the headless Agg backend, imported on first use.

pyplot takes about a second to import; the code location (loaded by every CLI call, run worker and
`dagster dev`) should not pay for it unless something is plotted.
"""

from __future__ import annotations


def pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display on workers; must precede pyplot
    import matplotlib.pyplot as plt

    return plt


# The Dagster UI renders a Markdown metadata value inline only when it is under 1,000 characters;
# longer ones hide behind "[Show Markdown]". A 1-bit PNG thumbnail of a plot fits in that.
INLINE_MARKDOWN_LIMIT = 1000
# Narrower tries last: a square, busy plot (a scaling fit's several curves) needs ~120 px to fit.
THUMBNAIL_WIDTHS = (240, 220, 200, 180, 160, 140, 120)


def inline_thumbnail_markdown(png: bytes, alt: str = "plot") -> str | None:
    """Markdown showing a small black-and-white copy of `png` that the UI renders without a click.

    None when even the smallest thumbnail would not fit (the full plot is still in the metadata).
    """
    import base64
    import io

    from PIL import Image

    source = Image.open(io.BytesIO(png)).convert("L")
    for width in THUMBNAIL_WIDTHS:
        height = max(1, round(source.height * width / source.width))
        small = source.resize((width, height), Image.LANCZOS)
        mono = small.point(lambda v: 0 if v < 200 else 255).convert("1", dither=Image.NONE)
        out = io.BytesIO()
        mono.save(out, format="PNG", optimize=True)
        markdown = f"![{alt}](data:image/png;base64,{base64.b64encode(out.getvalue()).decode()})"
        if len(markdown) < INLINE_MARKDOWN_LIMIT:
            return markdown
    return None
