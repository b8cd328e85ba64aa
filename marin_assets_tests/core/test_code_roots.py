"""Code-version roots read from each asset's compute function: no hand list beside it can miss a module it calls."""

import dagster as dg
import pytest

import marin_assets.data.clean.clean_source_gate as clean_source_gate
from marin_assets.core import import_graph
from marin_assets.lineage.code_roots import compute_roots, referenced_objects
from marin_assets.lineage.code_versions import code_version, covered_modules, versioned
from marin_assets.data.clean import cleaned_output
FACTORY_VALUE = object()


def _compute(asset: dg.AssetsDefinition):
    return asset.op.compute_fn.decorated_fn


def _derived(asset: dg.AssetsDefinition) -> set[str]:
    return set(import_graph.closure(compute_roots(_compute(asset))))


def _missed_by(version: str, asset: dg.AssetsDefinition) -> set[str]:
    """Modules the asset's compute function reaches that a code version does not cover."""
    return _derived(asset) - set(covered_modules(version))


def test_globals_closure_values_module_attributes_and_nested_code_are_read():
    def factory(captured):
        def compute():
            planned = cleaned_output.planned_job  # a module's attribute
            return [captured for _ in range(1)], planned, (lambda: clean_source_gate.dedup_peers)()
        return compute

    found = referenced_objects(factory(FACTORY_VALUE))
    assert cleaned_output in found and cleaned_output.planned_job in found
    assert FACTORY_VALUE in found  # from the factory's closure
    assert clean_source_gate.dedup_peers in found  # inside a nested lambda


def test_a_hand_list_that_misses_a_module_the_asset_calls_is_caught():
    """The hand lists of the previous round: cleaned_documents named `cleaned_output` only (it also calls
    clean_source_gate.dedup_peers), tokenizer named `tokenizer_files` only (it also reads through tokenize_job)."""
    from marin_assets_tests.stage_definitions import cleaned_documents
    from marin_assets_tests.stage_definitions import tokenizer

    hand_cleaned = code_version({}, "marin_assets.data.clean.cleaned_output")
    assert "marin_assets.data.clean.clean_source_gate" in _missed_by(hand_cleaned, cleaned_documents)
    hand_tokenizer = code_version({}, "marin_assets.tokenize.tokenizer_files")
    assert "marin_assets.tokenize.tokenize_job" in _missed_by(hand_tokenizer, tokenizer)


def test_every_asset_s_code_version_covers_every_module_its_compute_function_reaches():
    from marin_assets.definitions import defs

    checked = 0
    for asset in defs.resolve_asset_graph().assets_defs:
        if not asset.is_executable or not asset.is_materializable:
            continue  # observable sources are versioned by the data they observe
        for key, version in asset.code_versions_by_key.items():
            if version is None:
                continue
            checked += 1
            assert not _missed_by(version, asset), key
    assert checked >= 25


def test_roots_follow_wiring_and_launch_helpers_but_not_shared_resources():
    from marin_assets_tests.stage_definitions import cleaned_documents
    from marin_assets.definitions import defs

    cleaned = compute_roots(_compute(cleaned_documents))
    assert {"marin_assets.data.clean.clean_source_gate", "marin_assets.data.clean.cleaned_output"} <= set(cleaned)
    assert not [m for m in cleaned if m.startswith("marin_assets.resources") or m.endswith("_assets")]
    profile = next(a for a in defs.resolve_asset_graph().assets_defs if dg.AssetKey("scaling_profile") in a.keys)
    # scaling_profile trains through train.local_launcher.measure_profile: the trainer's entry point counts
    assert "marin_assets.train.maxtext_entry" in _derived(profile)


def test_an_asset_that_calls_no_package_code_is_refused():
    @dg.asset
    def constant() -> int:
        return 1

    with pytest.raises(ValueError, match="constant calls no marin_assets module"):
        versioned({})(constant)


def test_the_version_is_the_asset_s_and_changes_with_its_recipe_section():
    @dg.asset
    def peers(context) -> None:
        clean_source_gate.dedup_peers(None, "a", "source", ["a"])

    one, two = versioned({"a": 1})(peers), versioned({"a": 2})(peers)
    version = one.code_versions_by_key[one.key]
    assert version and version != two.code_versions_by_key[two.key]
    assert "marin_assets.data.clean.clean_source_gate" in covered_modules(version)


def test_a_recipe_loader_is_recipe_data_not_code_the_asset_runs():
    """eval_set reads one field of the cleaning recipe; the recipe schema imports every filter, which
    eval_set never runs: editing a filter must not stale it (its recipe section hashes the field)."""
    from marin_assets.lineage.code_roots import loads_a_recipe
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets_tests.stage_definitions import eval_set

    assert loads_a_recipe(load_cleaning_recipe) and not loads_a_recipe(clean_source_gate.dedup_peers)
    assert "marin_assets.data.clean.cleaning_recipe" not in compute_roots(_compute(eval_set))
    assert "marin_assets.data.clean.filters.c4" not in covered_modules(eval_set.code_versions_by_key[eval_set.key])
