"""Where a suite's outputs live: scaling/<suite>/runs/<key>/result.json, fits/, predictions/, heldout/.

Apart from run_results (which builds a run's result from the suite's plan): the fitters read these
paths without importing the suite planner, so the trainer's code never versions a fit.
"""

from __future__ import annotations

from marin_assets.core import layout

RESULT_FILE = "result.json"


def run_parts(suite: str, key: str) -> tuple[str, ...]:
    return (layout.SCALING, suite, "runs", key)


def output_parts(suite: str, *name: str) -> tuple[str, ...]:
    return (layout.SCALING, suite, *name)
