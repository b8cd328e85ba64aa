"""A quality filter is one class declaring its rules (name, measure, threshold field, comparison); FILTERS finds them.

datatrove style: a filter module defines one `QualityFilter` subclass with its options (`Config`, a
Recipe) and its rules, and registers it under the name the recipe's `filters:` section uses. A rule's
measure computes the value the threshold is compared with, and that same value is recorded for a
rejection, so what users see is what decided. Measures read one `TextView` per document (words split
once, shared by every filter); a measure that several rules share caches its result on the view.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from marin_assets.core.recipes import Recipe
from marin_assets.core.registries import Registry
from marin_assets.data.clean.filters.text import TextView

# Every module of the filters package is imported on the first lookup: a new filter is one new module.
FILTERS = Registry("quality filter", package="marin_assets.data.clean.filters")

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {">": operator.gt, "<": operator.lt, "==": operator.eq}


@dataclass(frozen=True)
class Rule:
    """One rule: the document is rejected as `name` when `measure(view, cfg) <comparison> threshold`.

    threshold: the name of the Config field holding it (None there switches the rule off), or a
    number; digits: how the recorded value is rounded (None: as measured). could_trip: an optional
    cheap bound, False when the rule cannot trip on this document (its measure is then skipped).
    """

    name: str
    measure: Callable[[TextView, Any], float]
    threshold: str | float
    comparison: str = ">"
    digits: int | None = None
    could_trip: Callable[[TextView, Any, float], bool] | None = None

    def __post_init__(self):
        if self.comparison not in _COMPARE:
            raise ValueError(f"rule {self.name}: comparison {self.comparison!r} is not one of {sorted(_COMPARE)}")
        object.__setattr__(self, "trips", _COMPARE[self.comparison])  # looked up once, not per document

    def limit(self, cfg) -> float | None:
        return getattr(cfg, self.threshold) if isinstance(self.threshold, str) else self.threshold


class Rejection(NamedTuple):
    rule: str
    value: float | int | None


class QualityFilter:
    """Base of the quality filters: subclasses set `Config` and `rules` (or `rules_for` when they depend
    on the options); a line filter also overrides `kept` to return the text it keeps (and `record`)."""

    name: ClassVar[str]
    Config: ClassVar[type[Recipe]]
    rules: ClassVar[tuple[Rule, ...]] = ()
    on_by_default: ClassVar[bool] = False  # in the default pipeline (recipe without a `filters:` section)
    default_position: ClassVar[int] = 100  # order in that default pipeline

    def rules_for(self, cfg) -> Iterable[Rule]:
        return self.rules

    def plan(self, cfg) -> tuple[tuple[Rule, float], ...]:
        """(rule, its threshold) for the rules `cfg` switches on, resolved once per options (they are frozen)."""
        cached_plan = self.__dict__.get("_plan")
        if cached_plan is None or cached_plan[0] is not cfg:
            limits = ((rule, rule.limit(cfg)) for rule in self.rules_for(cfg))
            cached_plan = self._plan = (cfg, tuple((rule, limit) for rule, limit in limits if limit is not None))
        return cached_plan[1]

    def reject(self, view: TextView, cfg) -> Rejection | None:
        """The first rule that trips, with the value its measure gave; None: the document passes."""
        for rule, limit in self.plan(cfg):
            if rule.could_trip is not None and not rule.could_trip(view, cfg, limit):
                continue
            value = rule.measure(view, cfg)
            if rule.trips(value, limit):
                return Rejection(rule.name, value if rule.digits is None else round(value, rule.digits))
        return None

    def record(self, view: TextView, cfg, stats: dict) -> None:
        """Stats this filter adds for every document it sees, kept or not (none by default)."""

    def kept(self, view: TextView, cfg, stats: dict) -> TextView:
        """The document passed: the view the next filter sees (a line filter's kept lines); stats it adds."""
        return view


def register(name: str):
    """Class decorator: the filter is the recipe's `filters: {<name>: {...}}`."""

    def add(cls: type[QualityFilter]) -> type[QualityFilter]:
        cls.name = name
        return FILTERS.register(name)(cls)

    return add


def frac(count: float, total: float) -> float:
    """count / total, 0 for an empty total (the share rules of every filter)."""
    return count / total if total else 0.0


def cached(view: TextView, compute: Callable[..., Any], *args: Any) -> Any:
    """compute(view, *args), a per-document intermediate several rules share: computed by the first that
    needs it (keyed by the function and its arguments' identities: options are frozen, not hashable)."""
    key = (compute, *map(id, args))
    memo = view.shared
    if key in memo:
        return memo[key]
    found = memo[key] = compute(view, *args)
    return found
