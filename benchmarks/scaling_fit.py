"""Benchmark: Approach-3 grid fit + 1000 bootstrap refits on Besiroglu et al.'s Chinchilla points.

Target: under 30 s wall on 2 cores. Also prints the fitted coefficients and the bootstrap 95%
intervals beside the published ones, so a faster fitter that fits differently shows up here.

    .venv/bin/python benchmarks/scaling_fit.py [--boot 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from marin_assets.scaling.bootstrap import bootstrap_parametric  # noqa: E402
from marin_assets.scaling.parametric import fit_parametric  # noqa: E402
from marin_assets_tests.scaling.chinchilla import PUBLISHED, PUBLISHED_95CI, chinchilla_points  # noqa: E402

TARGET_S = 30.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    points = chinchilla_points()
    started = time.perf_counter()
    fit = fit_parametric(points["N"], points["D"], points["loss"], method="mle")
    fitted = time.perf_counter()
    boot = bootstrap_parametric(points["N"], points["D"], points["loss"], fit, n_boot=args.boot, seed=0,
                                workers=args.workers)
    done = time.perf_counter()

    law, intervals = fit.law.as_dict(), boot.intervals()
    print(f"{'param':>6} {'ours':>10} {'published':>10} {'ratio':>7}   {'our 95% CI':>22}   {'published 95% CI':>20}")
    for name, published in PUBLISHED.items():
        lo, hi = intervals[name]
        plo, phi = PUBLISHED_95CI[name]
        print(f"{name:>6} {law[name]:10.4f} {published:10.4f} {law[name] / published:7.4f}   "
              f"({lo:9.4g}, {hi:9.4g})   ({plo:8.4g}, {phi:8.4g})")
    total = done - started
    print(f"grid fit ({fit.starts} of 4500 grid starts + MLE refinement): {fitted - started:.2f} s")
    print(f"{args.boot} bootstrap refits on {args.workers} workers: {done - fitted:.2f} s ({boot.n_failed} failed)")
    print(f"TOTAL wall: {total:.2f} s (target < {TARGET_S:.0f} s) -> {'OK' if total < TARGET_S else 'OVER'}")


if __name__ == "__main__":
    main()
