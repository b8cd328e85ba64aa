"""Before a suite trains: each run's wall time and device-hours from its size's measured profile, the total,
and the recipe budget (`max_device_hours`) that refuses a suite exceeding it, naming the largest runs.

Pure. A profile (scaling_profile[size]) is a few real steps of that size on the suite's resources:
the median step time and the start-up/compile time. A run's estimate = start-up + steps x median step;
device-hours = wall x devices.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from marin_assets.scaling.suite import SuiteRun

LARGEST_NAMED = 3


class SuiteBudgetExceeded(ValueError):
    """The suite's estimated device-hours exceed the recipe's max_device_hours."""


@dataclass(frozen=True)
class RunEstimate:
    run: str
    size: str
    steps: int
    wall_s: float
    device_hours: float


def estimate_run(run: SuiteRun, profile: dict) -> RunEstimate:
    wall = (profile.get("startup_compile_s") or 0.0) + run.steps * profile["median_step_s"]
    return RunEstimate(run.key, run.size, run.steps, wall, wall * profile["num_devices"] / 3600)


def plan_suite(runs: list[SuiteRun], profiles: dict[str, dict], max_device_hours: float | None) -> dict:
    """Per-run estimates, totals and the budget verdict; a size without a profile is named, not guessed."""
    missing = sorted({r.size for r in runs} - set(profiles))
    if missing:
        raise ValueError(f"no profile for sizes {missing}: materialize scaling_profile for them first")
    estimates = sorted((estimate_run(r, profiles[r.size]) for r in runs), key=lambda e: -e.device_hours)
    total = sum(e.device_hours for e in estimates)
    over = max_device_hours is not None and total > max_device_hours
    return {
        "runs": [asdict(e) for e in estimates],
        "total_device_hours": total,
        "total_wall_hours": sum(e.wall_s for e in estimates) / 3600,
        "max_device_hours": max_device_hours,
        "within_budget": not over,
        "problem": budget_problem(estimates, total, max_device_hours) if over else None,
    }


def budget_problem(estimates: list[RunEstimate], total: float, max_device_hours: float) -> str:
    largest = ", ".join(f"{e.run} ({e.device_hours:.3g} h)" for e in estimates[:LARGEST_NAMED])
    return (f"the suite needs ~{total:.3g} device-hours, above max_device_hours={max_device_hours:g}; "
            f"largest runs: {largest}; drop budgets or sizes, or raise max_device_hours")


def require_within_budget(plan: dict) -> None:
    if not plan["within_budget"]:
        raise SuiteBudgetExceeded(plan["problem"])
