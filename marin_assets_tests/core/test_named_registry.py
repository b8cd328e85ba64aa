"""The one named-registry base the sources and eval-set registries share: unique names, lookup by name."""

import pytest
from pydantic import ValidationError

from marin_assets.data.curate.eval_sets import EvalSetsRegistry, load_eval_sets
from marin_assets.data.sources.source_registry import SourcesRegistry, load_sources


@pytest.mark.parametrize("registry_type, loaded, field, kind", [
    (SourcesRegistry, load_sources, "sources", "source"),
    (EvalSetsRegistry, load_eval_sets, "eval_sets", "eval set"),
])
def test_names_are_unique_and_looked_up(registry_type, loaded, field, kind):
    registry = loaded()
    first = registry.entries()[0]
    assert registry.names[0] == first.name and registry.get(first.name) == first
    with pytest.raises(KeyError, match=f"unknown {kind} 'nope'; known: "):
        registry.get("nope")
    twice = {field: [first.model_dump(), first.model_dump()]}
    with pytest.raises(ValidationError, match=rf"duplicate {kind} names: \['{first.name}'\]"):
        registry_type.model_validate(twice)
