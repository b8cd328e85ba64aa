"""What every benchmark here prints beside its figures: cores per side, repeats, load, the ratio.

A ratio between two tools means something only at equal cores, on the same input, with the same
output work, on an otherwise idle machine. `Side` times one side over several rounds; `report`
prints each side's median and range, the cores it used, the ratio of medians, and the machine's load
average, with a warning when the machine was busy (above 0.5 per core).

    ours = Side("marin", cores=2); peer = Side("datatrove", cores=2)
    for _ in range(args.repeat):            # at least 3
        ours.time(lambda: run_ours(docs), units=len(docs))
        peer.time(lambda: run_peer(docs), units=len(docs))
    report("cleaning", ours, peer, unit="docs/s")
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MIN_REPEATS = 3
BUSY_LOAD_PER_CORE = 0.5


def machine_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


@dataclass
class Side:
    name: str
    cores: int
    rates: list[float] = field(default_factory=list)  # units per second, one per round
    loads: list[float] = field(default_factory=list)  # 1-minute load average before each round
    cold: list[float] = field(default_factory=list)  # seconds of start-up a user waits for (session, pool)
    last: Any = None  # the last round's return value, to compare decisions

    def time(self, fn: Callable[[], Any], units: float) -> Any:
        self.loads.append(load_average()[0])
        seconds, self.last = timed(fn)
        self.rates.append(units / seconds)
        return self.last

    def time_cold(self, fn: Callable[[], Any]) -> Any:
        """Time a start-up step (session + warm-up job, pool start): reported beside the steady state."""
        seconds, result = timed(fn)
        self.cold.append(seconds)
        return result

    def median(self) -> float:
        return statistics.median(self.rates)

    def describe(self, unit: str) -> str:
        lo, hi = min(self.rates), max(self.rates)
        loads = f"; load before each round {', '.join(f'{x:.1f}' for x in self.loads)}" if self.loads else ""
        cold = (f"; cold start median {statistics.median(self.cold):.1f} s (range {min(self.cold):.1f}-"
                f"{max(self.cold):.1f})" if self.cold else "")  # fmt: skip
        return (f"{self.name:>14}: median {self.median():,.0f} {unit} (range {lo:,.0f}-{hi:,.0f}, "
                f"{len(self.rates)} runs, {self.cores} core{'s' if self.cores != 1 else ''}{loads}{cold})")  # fmt: skip

    def with_cold_start(self, units: float) -> float:
        """Units per second of one round counting its cold start too (median round + median start-up)."""
        cold = statistics.median(self.cold) if self.cold else 0.0
        return units / (units / self.median() + cold)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds one call of fn takes, what it returned)."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def busy_warning(load: tuple[float, float, float], cores: int) -> str | None:
    per_core = load[0] / cores
    if per_core > BUSY_LOAD_PER_CORE:
        return (f"WARNING: load average {load[0]:.2f} on {cores} cores ({per_core:.2f}/core > "
                f"{BUSY_LOAD_PER_CORE}): other work ran beside this benchmark; figures are not clean")
    return None


def report(title: str, ours: Side, peer: Side, unit: str, target: float | None = None,
           units: float | None = None) -> float:
    """Print both sides and the ratio of medians; returns the ratio."""
    cores = machine_cores()
    load_before = getattr(report, "_load_at_import", load_average())
    load_now = load_average()
    print(f"== {title} ==")
    print(ours.describe(unit))
    print(peer.describe(unit))
    if len(ours.rates) < MIN_REPEATS or len(peer.rates) < MIN_REPEATS:
        print(f"WARNING: fewer than {MIN_REPEATS} runs per side: medians are not meaningful")
    if ours.cores != peer.cores:
        print(f"WARNING: unequal cores ({ours.name} {ours.cores}, {peer.name} {peer.cores}): the ratio is not a fair one")
    ratio = ours.median() / peer.median()
    verdict = "" if target is None else (f"  (target >= {target:g}: {'met' if ratio >= target else 'NOT met'})")
    print(f"ratio {ours.name}/{peer.name}: {ratio:.2f}x{verdict}")
    if units is not None and (ours.cold or peer.cold):
        with_cold = ours.with_cold_start(units) / peer.with_cold_start(units)
        print(f"counting cold start once ({units:,.0f} {unit.split('/')[0]}): {ours.with_cold_start(units):,.0f} vs "
              f"{peer.with_cold_start(units):,.0f} {unit} = {with_cold:.2f}x")  # fmt: skip
    print(f"machine: {cores} cores; load average at start {load_before[0]:.2f}, now "
          f"{load_now[0]:.2f} {load_now[1]:.2f} {load_now[2]:.2f} (now includes this benchmark's own work)")
    warning = busy_warning(load_before, cores)  # only the start: by the end the load is mostly our own
    if warning:
        print(warning)
    return ratio


report._load_at_import = load_average()  # the load before the benchmark itself started working
