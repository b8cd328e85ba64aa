"""Licenses and data-use terms (pure), and the training gate on real inventories in storage."""

import yaml

import pytest

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets_tests.data.registry_fixture import write_registry  # noqa: F401 (fixture)

from marin_assets.core.storage import Storage
from marin_assets.data.sources.compliance import require_sources_cleared
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.data.sources.licenses import (
    INVENTORY_NAME,
    SourcesNotClearedError,
    compliance_from_inventory,
    data_use_terms,
    licenses_for_sources,
)


def test_licenses_come_from_the_registry_and_unknown_sources_are_named():
    registry = load_sources()
    assert licenses_for_sources(registry, ["python_docs", "python_docs"]) == {"python_docs": "PSF-2.0"}
    with pytest.raises(KeyError, match="unknown source 'nope'"):
        licenses_for_sources(registry, ["nope"])


@pytest.mark.parametrize("spdx, terms", [
    ("CC-BY-NC-4.0", "non-commercial"), ("CC-BY-SA-4.0", "share-alike"), ("CC-BY-4.0", "attribution"),
    ("LGPL-2.1-only", "copyleft"), ("GPL-3.0-only", "copyleft"), ("PSF-2.0", "permissive"),
    ("CC0-1.0", "public-domain"), ("LicenseRef-internal", "custom terms"), ("Proprietary", "unreviewed"),
])
def test_data_use_terms_by_license(spdx, terms):
    assert data_use_terms(spdx) == terms


def test_inventory_without_a_verdict_is_not_cleared():
    assert compliance_from_inventory({"files": []}, "web") == {
        "cleared": False, "problems": ["web/inventory.json has no compliance verdict"],
    }
    assert compliance_from_inventory(None, "web")["cleared"] is None


def _inventory(storage: Storage, source: str, files_changed: bool = False, recorded_cleared: bool = True) -> None:
    """The source's real inventory; `files_changed`: as if its files no longer matched the registry."""
    inventory = source_inventory(load_sources().get(source))
    if files_changed:
        inventory["content_hash"] = "0" * 64
    with storage.atomic_dir("raw", source) as staged:
        staged.write_json({**inventory, "compliance": {"cleared": recorded_cleared, "problems": []}}, INVENTORY_NAME)


def test_gate_names_every_uncleared_source_and_why(tmp_path):
    storage = Storage(str(tmp_path))
    _inventory(storage, "python_docs")
    _inventory(storage, "dirty_web", files_changed=True)
    require_sources_cleared(storage, "training_run[t]", ["python_docs"])  # passes
    with pytest.raises(SourcesNotClearedError) as err:
        require_sources_cleared(storage, "training_run[t]", ["python_docs", "dirty_web", "debian_licenses"])
    message = str(err.value)
    assert message.startswith("training_run[t] refuses its input: 2 upstream source(s) not cleared for use")
    assert "dirty_web: checksum mismatch: provenance.checksum is " in message and f"hash to {'0' * 64}" in message
    assert "debian_licenses: raw_corpus[debian_licenses] has no committed inventory" in message
    assert "python_docs" not in message
    with pytest.raises(SourcesNotClearedError, match="no upstream sources"):
        require_sources_cleared(storage, "training_run[t]", [])


def test_the_gate_decides_now_not_what_an_old_inventory_recorded(tmp_path, write_registry):
    """An inventory recorded as cleared does not clear a source whose registry entry no longer passes."""
    storage = Storage(str(tmp_path))
    _inventory(storage, "python_docs", recorded_cleared=True)
    entry = next(e for e in yaml.safe_load((PACKAGE_RECIPES / "sources.yaml").read_text())["sources"]
                 if e["name"] == "python_docs")
    entry["uri"] = str((PACKAGE_RECIPES / entry["uri"]).resolve())
    write_registry([{**entry, "license": "LicenseRef-unreviewed"}], extra_roots=(str(PACKAGE_RECIPES.parent / "sample_data"),))
    with pytest.raises(SourcesNotClearedError, match=r"python_docs: license 'LicenseRef-unreviewed' is not in"):
        require_sources_cleared(storage, "training_run[t]", ["python_docs"])
