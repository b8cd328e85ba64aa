"""The compliance gate as a pure function: allowlist, provenance fields, checksum, files present."""

from __future__ import annotations

import pytest

from marin_assets.core.recipes import RecipeError
from marin_assets.data.sources.compliance import CompliancePolicy, compliance_problems, load_policy
from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.sources.source_registry import Provenance, SourceSpec, load_sources

POLICY = CompliancePolicy(license_allowlist=["CC0-1.0", "PSF-2.0"])


def make_source(tmp_path, license="CC0-1.0", checksum: str | None = "auto", provenance=True) -> tuple[SourceSpec, dict]:
    (tmp_path / "a.jsonl").write_text('{"text": "hello"}\n')
    spec = SourceSpec(name="s", uri=str(tmp_path / "*.jsonl"), format="jsonl", license=license)
    inventory = source_inventory(spec)
    if provenance:
        value = inventory["content_hash"] if checksum == "auto" else checksum
        spec = spec.model_copy(update={"provenance": Provenance(origin="test", version="1", checksum=value)})
    return spec, inventory


def test_the_shipped_sample_sources_are_all_cleared():
    policy = load_policy()
    for spec in load_sources().sources:
        assert compliance_problems(spec, source_inventory(spec), policy) == [], spec.name


def test_inventory_lists_files_with_sizes_and_hashes(tmp_path):
    spec, inventory = make_source(tmp_path)
    assert inventory["files"] == [
        {"path": "a.jsonl", "size": 18, "sha256": inventory["files"][0]["sha256"]},
    ]
    assert len(inventory["content_hash"]) == 64
    (tmp_path / "a.jsonl").write_text('{"text": "hello!"}\n')
    assert source_inventory(spec)["content_hash"] != inventory["content_hash"]


def test_a_source_that_passes_has_no_problems(tmp_path):
    spec, inventory = make_source(tmp_path)
    assert compliance_problems(spec, inventory, POLICY) == []


def test_unknown_license_is_refused(tmp_path):
    spec, inventory = make_source(tmp_path, license="NOASSERTION")
    [problem] = compliance_problems(spec, inventory, POLICY)
    assert problem.startswith("license 'NOASSERTION' is not in the allowlist")


def test_missing_provenance_and_missing_checksum_are_refused(tmp_path):
    spec, inventory = make_source(tmp_path, provenance=False)
    assert compliance_problems(spec, inventory, POLICY) == ["provenance is missing (origin, version, checksum)"]
    spec, inventory = make_source(tmp_path, checksum=None)
    assert compliance_problems(spec, inventory, POLICY) == ["provenance.checksum is missing"]
    relaxed = POLICY.model_copy(update={"required_provenance": ["origin", "version"]})
    assert compliance_problems(spec, inventory, relaxed) == []


def test_changed_files_fail_the_checksum_unless_verification_is_off(tmp_path):
    spec, _ = make_source(tmp_path)
    (tmp_path / "a.jsonl").write_text('{"text": "tampered"}\n')
    inventory = source_inventory(spec)
    [problem] = compliance_problems(spec, inventory, POLICY)
    assert problem.startswith("checksum mismatch") and inventory["content_hash"] in problem
    assert compliance_problems(spec, inventory, POLICY.model_copy(update={"verify_checksum": False})) == []


def test_a_source_without_files_is_refused(tmp_path):
    spec = SourceSpec(
        name="s",
        uri=str(tmp_path / "nothing" / "*.jsonl"),
        format="jsonl",
        license="CC0-1.0",
        provenance=Provenance(origin="test", version="1", checksum="x"),
    )
    problems = compliance_problems(spec, source_inventory(spec), POLICY.model_copy(update={"verify_checksum": False}))
    assert problems == [f"no files match {spec.uri}"]


def test_a_bad_policy_recipe_names_the_field(tmp_path):
    (tmp_path / "compliance.yaml").write_text("license_allowlist: [MIT]\nverify_checksums: true\n")
    with pytest.raises(RecipeError, match="verify_checksums"):
        load_policy(str(tmp_path / "compliance.yaml"))
