"""A legible inline preview of line plots: drawn from the data at the size the UI shows it.

The Dagster UI draws a Markdown image inline only when the whole value is under 1,000 characters
(INLINE_MARKDOWN_LIMIT), about 740 bytes of PNG. A downscaled copy of a full matplotlib plot that
fits is ~180 px wide with 3-px text (core/plotting.inline_thumbnail_markdown). Drawn directly at
~300 px in black and white, with no frame, grid or legend box and only the four axis-end values,
the title and the axis name as 12-px text (PREVIEW_FONT_PX), the same curves fit and read.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from marin_assets.core.plotting import INLINE_MARKDOWN_LIMIT

PREVIEW_FONT_PX = 12  # Pillow's bundled font: digits ~9 px tall, legible on screen at 100%
PREVIEW_SIZES = ((300, 110), (280, 100), (260, 96), (240, 90))  # the widest that fits wins
MAX_POINTS = 40  # per line: a noisy curve of thousands of steps drawn as its 40-bucket means
MARK_RADIUS = 2  # marks are 5x5 filled squares
Point = tuple[float, float]


def preview_key(name: str) -> str:
    """The metadata key of `name`'s inline preview, shown right under the full plot."""
    return f"{name} (preview)"


def _label(value: float) -> str:
    return f"{value:.3g}"


def thinned(series: Sequence[Point], n: int = MAX_POINTS) -> list[Point]:
    """At most `n` points: the means of `n` consecutive buckets (the curve's shape, not its noise)."""
    if len(series) <= n:
        return list(series)
    buckets = [series[i * len(series) // n:(i + 1) * len(series) // n] for i in range(n)]
    return [(sum(p[0] for p in b) / len(b), sum(p[1] for p in b) / len(b)) for b in buckets]


def line_preview_png(lines: Sequence[Sequence[Point]], marks: Sequence[Sequence[Point]], title: str,
                     x_name: str, size: tuple[int, int]) -> bytes:
    """1-bit PNG: `lines` as polylines, `marks` as filled squares, on shared linear axes."""
    from PIL import Image, ImageDraw, ImageFont

    lines = [thinned(series) for series in lines]
    points = [p for series in (*lines, *marks) for p in series]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    (lo_x, hi_x), (lo_y, hi_y) = (min(xs), max(xs)), (min(ys), max(ys))
    width, height = size
    font = ImageFont.load_default(size=PREVIEW_FONT_PX)
    left = 6 + max(font.getbbox(_label(v))[2] for v in (lo_y, hi_y))
    top, right, bottom = PREVIEW_FONT_PX + 6, width - 6, height - PREVIEW_FONT_PX - 6

    def at(x: float, y: float) -> tuple[float, float]:
        fx = (x - lo_x) / (hi_x - lo_x) if hi_x > lo_x else 0.5
        fy = (y - lo_y) / (hi_y - lo_y) if hi_y > lo_y else 0.5
        return left + fx * (right - left), bottom - fy * (bottom - top)

    image = Image.new("1", size, 1)
    draw = ImageDraw.Draw(image)
    draw.line([(left, top), (left, bottom), (right, bottom)], fill=0)  # two axes, no frame or grid
    for series in lines:
        if len(series) > 1:
            draw.line([at(*p) for p in series], fill=0, width=1)
    for series in marks:
        for p in series:
            x, y = at(*p)
            draw.rectangle([x - MARK_RADIUS, y - MARK_RADIUS, x + MARK_RADIUS, y + MARK_RADIUS], fill=0)
    draw.text((2, top - PREVIEW_FONT_PX // 2), _label(hi_y), font=font, fill=0)
    draw.text((2, bottom - PREVIEW_FONT_PX // 2), _label(lo_y), font=font, fill=0)
    draw.text((left - 2, bottom + 3), _label(lo_x), font=font, fill=0)
    x_end = f"{_label(hi_x)} {x_name}"
    draw.text((right - font.getbbox(x_end)[2], bottom + 3), x_end, font=font, fill=0)
    draw.text((left + 8, 1), title, font=font, fill=0)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def line_preview_markdown(lines: Sequence[Sequence[Point]], marks: Sequence[Sequence[Point]], title: str,
                          x_name: str, caption: str = "", alt: str = "preview") -> str | None:
    """The largest preview (PREVIEW_SIZES) whose Markdown the UI draws inline; None if none fits.

    Keep `title` to a word or two (text costs ~25 PNG characters a letter); say the rest, e.g. which
    line is which, in `caption`: Markdown text under the image, one character a letter.
    """
    if not any(len(s) for s in (*lines, *marks)):
        return None
    for size in PREVIEW_SIZES:
        png = line_preview_png(lines, marks, title, x_name, size)
        markdown = f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})"
        markdown += f"\n\n{caption}" if caption else ""
        if len(markdown) < INLINE_MARKDOWN_LIMIT:
            return markdown
    return None
