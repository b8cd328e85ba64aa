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
