"""What a curation step returns, the protocol every step follows, and their registry (see curation_steps.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from marin_assets.core.registries import Registry

# name -> factory(recipe, source, inputs) -> step or None (switched off). Every module of data/curate is
# imported on the first lookup: a new step is one module there with a `@register_step` factory.
STEPS = Registry("curation step", package="marin_assets.data.curate")


def register_step(name: str, position: int):
    """Decorator of a step's factory; steps run in increasing `position` (shipped: 10, 20, 30)."""

    def add(factory):
        factory.position = position
        return STEPS.register(name)(factory)

    return add


@dataclass
class StepOutcome:
    text: str
    counts: dict[str, int] = field(default_factory=dict)  # "step:what" -> n, summed over the run
    reject: str | None = None  # reason when the document must go
    fields: dict[str, Any] = field(default_factory=dict)  # extra columns (quality_score)


class CurationStep(Protocol):
    name: str

    def apply(self, text: str) -> StepOutcome: ...


@dataclass(frozen=True)
class Value:
    """A plain stand-in for a Spark broadcast: anything with `.value`."""

    value: Any
