"""The compliance gate for raw sources: license allowlist, provenance fields, checksum of the files.

Pure: `compliance_problems` takes the source, an inventory of its files and the policy, and returns
what is wrong (nothing = cleared). The Dagster check in raw_assets.py only reports the result.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from marin_assets.core.hashing import combine_hashes, sha256_stream
from marin_assets.core.recipes import Recipe, load_recipe
from marin_assets.data.source_files import list_source_files, relative_name
from marin_assets.data.sources import SourceSpec

COMPLIANCE_RECIPE = "compliance.yaml"

ProvenanceField = Literal["origin", "version", "checksum"]


class CompliancePolicy(Recipe):
    license_allowlist: list[str] = Field(description="SPDX ids (or LicenseRef-*) a source may carry")
    required_provenance: list[ProvenanceField] = ["origin", "version", "checksum"]
    verify_checksum: bool = Field(True, description="refuse a source whose files no longer match its checksum")


def load_policy(path: str = COMPLIANCE_RECIPE) -> CompliancePolicy:
    return load_recipe(path, CompliancePolicy)


def source_inventory(spec: SourceSpec) -> dict:
    """Every file of the source with its size and sha256, and their combined content hash."""
    import fsspec

    files = []
    for uri in list_source_files(spec):
        fs, path = fsspec.core.url_to_fs(uri)
        with fs.open(path, "rb") as f:
            digest = sha256_stream(f)
        files.append({"path": relative_name(uri, spec), "size": fs.size(path), "sha256": digest})
    return {
        "source": spec.name,
        "uri": spec.uri,
        "files": files,
        "content_hash": combine_hashes((f["path"], f["sha256"]) for f in files),
    }


def compliance_problems(spec: SourceSpec, inventory: dict, policy: CompliancePolicy) -> list[str]:
    problems = []
    if spec.license not in policy.license_allowlist:
        problems.append(f"license {spec.license!r} is not in the allowlist {sorted(policy.license_allowlist)}")
    provenance = spec.provenance
    if provenance is None:
        problems.append("provenance is missing (origin, version, checksum)")
    else:
        for name in policy.required_provenance:
            if not getattr(provenance, name):
                problems.append(f"provenance.{name} is missing")
    if not inventory["files"]:
        problems.append(f"no files match {spec.uri}")
    checksum = provenance.checksum if provenance else None
    if policy.verify_checksum and checksum and checksum != inventory["content_hash"]:
        problems.append(
            f"checksum mismatch: provenance.checksum is {checksum}, the files hash to {inventory['content_hash']}"
        )
    return problems
