"""What a curation step returns, and the protocol every step follows (see data/curation.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


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
