"""Benchmark: Approach-3 grid fit + 1000 bootstrap refits on Besiroglu et al.'s Chinchilla points.

Target: under 30 s wall on 2 cores. Also prints the fitted coefficients and the bootstrap 95%
intervals beside the published ones, so a faster fitter that fits differently shows up here.
There is no peer figure for this one (benchmarks.md has none); the reference is the published
table itself. The machine is shared, so run it a few times (--repeat) and read the spread.

    .venv/bin/python benchmarks/scaling_fit.py [--boot 1000] [--workers N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

TARGET_S = 30.0
PROCESS_START = time.perf_counter()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=None,
                        help="processes for the refits, this one included (default: the library's choice)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    # Imported here, not at module level: spawned bootstrap workers re-import this script.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from marin_assets.scaling.bootstrap import bootstrap_parametric
    from marin_assets.scaling.parametric import fit_parametric
    from marin_assets_tests.scaling.chinchilla import PUBLISHED, PUBLISHED_95CI, chinchilla_points

    points = chinchilla_points()
    processes = args.workers or 1  # the library's default
    print(f"imports + data: {time.perf_counter() - PROCESS_START:.2f} s (not counted below)")
    totals = []
    for attempt in range(1, args.repeat + 1):
        started = time.perf_counter()
        fit = fit_parametric(points["N"], points["D"], points["loss"], method="mle")
        fitted = time.perf_counter()
        boot = bootstrap_parametric(points["N"], points["D"], points["loss"], fit, n_boot=args.boot, seed=0,
                                    workers=args.workers)
        done = time.perf_counter()
        totals.append(done - started)
        print(f"run {attempt}: grid fit ({fit.starts} of 4500 grid starts + MLE refinement) {fitted - started:.2f} s; "
              f"{args.boot} bootstrap refits on {processes} process(es) {done - fitted:.2f} s "
              f"({boot.n_failed} failed); total {totals[-1]:.2f} s")

    law, intervals = fit.law.as_dict(), boot.intervals()
    print(f"\n{'param':>6} {'ours':>10} {'published':>10} {'ratio':>7}   {'our 95% CI':>22}   {'published 95% CI':>20}")
    for name, published in PUBLISHED.items():
        lo, hi = intervals[name]
        plo, phi = PUBLISHED_95CI[name]
        print(f"{name:>6} {law[name]:10.4f} {published:10.4f} {law[name] / published:7.4f}   "
              f"({lo:9.4g}, {hi:9.4g})   ({plo:8.4g}, {phi:8.4g})")
    worst = max(totals)
    spread = f"min {min(totals):.2f} / median {statistics.median(totals):.2f} / max {worst:.2f} s"
    print(f"\nTOTAL wall over {len(totals)} run(s): {spread} (target < {TARGET_S:.0f} s) -> "
          f"{'OK' if worst < TARGET_S else 'OVER'}")


if __name__ == "__main__":
    main()
