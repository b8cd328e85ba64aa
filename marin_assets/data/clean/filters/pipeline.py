"""Run the recipe's quality filters in the recipe's order; the first rule that trips rejects the document.

Default order as in FineWeb's pipeline: Gopher repetition, Gopher quality, C4 (which also drops lines),
FineWeb. Hard-wrapped text is reflowed into paragraphs first (reflow.py), so every filter sees prose as
prose. Filters are found by name in FILTERS (filter_base.py: one module per filter, discovered). Rule
names are "<filter>:<rule>", e.g. "gopher_repetition:top_2_gram"; the value recorded with a rejection is
what the rule's measure compared with its threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, ConfigDict, model_validator

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.filter_base import FILTERS, QualityFilter
from marin_assets.data.clean.filters.reflow import ReflowConfig, reflow
from marin_assets.data.clean.filters.text import TextView


def _default_filters() -> list[type[QualityFilter]]:
    return sorted((cls for cls in FILTERS.values() if cls.on_by_default), key=lambda cls: cls.default_position)


def _resolved_order(named: list[str]) -> list[str]:
    """The named filters in their order; an on-by-default filter not named runs too, just before the first
    named default filter that follows it in the default order (at the end when none does)."""
    defaults = [cls.name for cls in _default_filters()]
    order = list(named)
    for name in reversed([d for d in defaults if d not in named]):
        later = [n for n in order if n in defaults and defaults.index(n) > defaults.index(name)]
        order.insert(order.index(later[0]) if later else len(order), name)
    return order


class FilterSettings(Recipe):
    """`reflow` (null: off), then one entry per quality filter by its registered name: its options, or null
    for off. A section runs its filters in its order; filters it does not name keep their default.

    `order` is that order, derived when the section is read: it is what the filters' run order travels and
    hashes as, since the canonical JSON of hashes and of the job's values (cleaning_values) sorts keys."""

    model_config = ConfigDict(extra="allow", frozen=True)

    reflow: ReflowConfig | None = ReflowConfig()
    order: list[str] = Field(default_factory=list, description="the order the quality filters run (default: "
                             "the order the section names them in)")

    @model_validator(mode="before")
    @classmethod
    def _registered_filters(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        named = [name for name in data if name not in ("reflow", "order")]
        for name in [*named, *data.get("order", [])]:
            if name not in FILTERS:
                raise ValueError(f"filters.{name}: unknown quality filter '{name}'; known: {', '.join(FILTERS.names())}")
        if "order" in data:  # a dumped section read back (the job's values): its order, not its keys' order
            if missing := sorted(set(named) - set(data["order"])):
                raise ValueError(f"filters.order: names no place for {missing}")
            named = list(data["order"])
        out = {"reflow": data["reflow"]} if "reflow" in data else {}
        out["order"] = _resolved_order(named)
        for name in out["order"]:
            options, config = data.get(name, {}), FILTERS[name].Config
            out[name] = options if options is None or isinstance(options, config) else config.model_validate(options)
        return out

    def filter_options(self) -> dict[str, Recipe | None]:
        """Each quality filter's options (None: off), in the order they run."""
        extra = self.model_extra or {}
        return {name: extra[name] for name in self.order}

    def pipeline(self) -> list[tuple[QualityFilter, Recipe]]:
        """(filter, its options) in the order they run, switched-off ones left out."""
        return [(FILTERS[name](), cfg) for name, cfg in self.filter_options().items() if cfg is not None]


@dataclass(frozen=True)
class FilterOutcome:
    reason: str | None  # None: the document is kept
    text: str  # the text after reflow and line-level rules (C4 drops lines); the input text when rejected
    stats: dict = field(default_factory=dict)
    value: float | str | None = None  # what tripped the rule (for the rejected examples users see)

    @property
    def kept(self) -> bool:
        return self.reason is None


# The settings last run and their filter objects: built once, not per document (settings are frozen).
_PIPELINES: dict[int, tuple[FilterSettings, list[tuple[QualityFilter, Recipe]]]] = {}


def _pipeline(settings: FilterSettings) -> list[tuple[QualityFilter, Recipe]]:
    found = _PIPELINES.get(id(settings))
    if found is None or found[0] is not settings:
        if len(_PIPELINES) > 16:
            _PIPELINES.clear()
        found = _PIPELINES[id(settings)] = (settings, settings.pipeline())
    return found[1]


def run_filters(text: str, settings: FilterSettings, words: str = "fast") -> FilterOutcome:
    """words: the word splitter (cleaning.yaml `words`): fast (fastpath/words) or spacy (spaCy itself)."""
    original = text
    stats = {"chars": len(text)}
    if settings.reflow is not None:
        text = reflow(text, settings.reflow)
        stats["reflowed_lines"] = original.count("\n") - text.count("\n")
    view = TextView(text, words)
    for quality_filter, cfg in _pipeline(settings):
        quality_filter.record(view, cfg, stats)
        rejected = quality_filter.reject(view, cfg)
        if rejected is not None:
            return FilterOutcome(f"{quality_filter.name}:{rejected.rule}", original, stats, rejected.value)
        view = quality_filter.kept(view, cfg, stats)
    stats["kept_chars"] = len(view.text)
    return FilterOutcome(None, view.text, stats)
