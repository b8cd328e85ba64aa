"""One compliance decision on every consumer: each asset of the real graph that reads a source, a
mixture or an eval set refuses an uncleared input, with the same error and the same reason."""

import dagster as dg
import pytest

from marin_assets.core import layout
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.data.sources.compliance import INVENTORY_NAME, SourcesNotClearedError, committed_verdict, uncleared_line
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.resources import resources_for
from marin_assets.resources.storage_resource import StorageResource

# What a consumer reads: a raw source, a mixture built from sources, an eval set.
CONSUMED = {dg.AssetKey("raw_corpus"), dg.AssetKey("mixture"), dg.AssetKey("eval_set")}


@pytest.fixture(scope="module")
def graph_assets():
    from marin_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    consumers = sorted((key for key in graph.materializable_asset_keys if graph.get(key).parent_keys & CONSUMED),
                       key=lambda k: k.to_user_string())
    return defs, consumers


def _uncleared_storage(root) -> Storage:
    """Every source's raw inventory committed, its files changed since the registry's checksum;
    every mixture's manifest naming every source (as record_output writes it)."""
    storage = Storage(str(root))
    names = load_sources().names
    for source in names:
        with storage.atomic_dir(layout.RAW, source) as staged:
            staged.write_json({"source": source, "files": [{"path": "a.jsonl", "size": 1, "sha256": "0" * 64}],
                               "content_hash": "0" * 64}, INVENTORY_NAME)
    from marin_assets.tokenize.tokenize_recipe import mixture_names

    for mixture in mixture_names():
        with storage.atomic_dir(layout.MIXTURES, mixture) as staged:
            staged.write_json({"asset": "mixture", "licenses": {s: "CC0-1.0" for s in names}}, MANIFEST_NAME)
    return storage


def test_the_graph_has_the_consumers_it_should(graph_assets):
    """The enumeration below is not vacuous: the stages' consumers are all found from the graph."""
    _, consumers = graph_assets
    found = {k.to_user_string() for k in consumers}
    assert {"cleaned_documents", "quality_classifier", "training_plan", "training_run", "scaling_run",
            "heldout_run"} <= found, found


def test_every_consumer_refuses_an_uncleared_input_with_the_same_reason(graph_assets, tmp_path):
    defs, consumers = graph_assets
    storage = _uncleared_storage(tmp_path / "store")
    reasons = {s: uncleared_line(s, committed_verdict(storage, s).messages) for s in load_sources().names}
    assert all("checksum mismatch" in line for line in reasons.values())
    resources = {**resources_for("local"), "storage": StorageResource(root_uri=str(tmp_path / "store"))}
    refused = {}
    for key in consumers:
        asset = defs.get_assets_def(key)
        partition = asset.partitions_def.get_partition_keys()[0] if asset.partitions_def else None
        result = dg.materialize([asset], partition_key=partition, resources=resources, raise_on_error=False,
                                instance=dg.DagsterInstance.ephemeral())
        assert not result.success, f"{key.to_user_string()} ran on uncleared sources"
        [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        error = failure.event_specific_data.error
        text = error.to_string()
        assert SourcesNotClearedError.__name__ in text, f"{key.to_user_string()} failed otherwise:\n{text}"
        assert "not cleared for use" in text
        refused[key.to_user_string()] = [s for s, line in reasons.items() if line in text]
        assert refused[key.to_user_string()], f"{key.to_user_string()} named no uncleared source's reason:\n{text}"
    assert len(refused) == len(consumers)
