"""The compliance decision for raw sources: license allowlist, provenance fields, checksum of the files.

`compliance_verdict` takes the source's registry entry, the inventory of its files and the policy,
and says what is wrong, each reason with its code and values (nothing = cleared). It is the one
decision: raw_corpus records it, the `compliance` check reports it, and the cleaning and training
gates refuse on it (`committed_verdict`: registry and policy as they are now, inventory in storage),
so the three cannot disagree. `require_sources_cleared` is the one refusal every consumer of a
source, mixture or eval set makes on it, with the same error and reasons whichever asset refuses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from marin_assets.core import layout
from marin_assets.core.recipes import Recipe, load_recipe
from marin_assets.core.storage import StagedOutput, Storage
from marin_assets.data.sources.source_registry import SourceSpec, SourcesRegistry, load_sources

COMPLIANCE_RECIPE = "compliance.yaml"
INVENTORY_NAME = "inventory.json"  # raw/<source>/inventory.json, written by raw_corpus

ProvenanceField = Literal["origin", "version", "checksum"]


class CompliancePolicy(Recipe):
    license_allowlist: list[str] = Field(description="SPDX ids (or LicenseRef-*) a source may carry")
    required_provenance: list[ProvenanceField] = ["origin", "version", "checksum"]
    verify_checksum: bool = Field(True, description="refuse a source whose files no longer match its checksum")


def load_policy(path: str = COMPLIANCE_RECIPE) -> CompliancePolicy:
    return load_recipe(path, CompliancePolicy)


@dataclass(frozen=True)
class ComplianceProblem:
    code: str  # license_not_allowed | missing_field | no_files | checksum_mismatch | no_inventory | unknown_source
    message: str
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ComplianceVerdict:
    source: str
    problems: tuple[ComplianceProblem, ...]

    @property
    def cleared(self) -> bool:
        return not self.problems

    @property
    def messages(self) -> list[str]:
        return [p.message for p in self.problems]

    def summary(self) -> str:
        return "cleared" if self.cleared else f"not cleared: {'; '.join(self.messages)}"

    def as_json(self) -> dict:
        """What inventory.json and the manifests record: cleared, the messages, and each reason with its values."""
        reasons = [{"code": p.code, "message": p.message, **p.details} for p in self.problems]
        return {"cleared": self.cleared, "problems": self.messages, "reasons": reasons}


def compliance_verdict(source: str, spec: SourceSpec | None, inventory: dict | None,
                       policy: CompliancePolicy) -> ComplianceVerdict:
    """The one compliance decision: the check, the cleaning gate and the training gate all use it.

    spec: the source's registry entry now (None: not in the registry); inventory: its committed
    raw inventory (None: raw_corpus never ran); policy: compliance.yaml now.
    """
    if spec is None:
        return ComplianceVerdict(source, (ComplianceProblem(
            "unknown_source", f"source {source!r} is not in the sources registry"),))
    if inventory is None:
        return ComplianceVerdict(source, (ComplianceProblem(
            "no_inventory", f"raw_corpus[{source}] has no committed inventory; materialize it first"),))
    problems = []
    if spec.license not in policy.license_allowlist:
        problems.append(ComplianceProblem(
            "license_not_allowed", f"license {spec.license!r} is not in the allowlist {sorted(policy.license_allowlist)}",
            {"license": spec.license, "allowlist": sorted(policy.license_allowlist)}))
    provenance = spec.provenance
    missing = list(policy.required_provenance) if provenance is None else [
        name for name in policy.required_provenance if not getattr(provenance, name)]
    if provenance is None:
        problems.append(ComplianceProblem("missing_field", "provenance is missing (origin, version, checksum)",
                                          {"fields": [f"provenance.{n}" for n in missing]}))
    else:
        problems += [ComplianceProblem("missing_field", f"provenance.{name} is missing", {"fields": [f"provenance.{name}"]})
                     for name in missing]
    if not inventory.get("files"):
        problems.append(ComplianceProblem("no_files", f"no files match {spec.uri}", {"uri": spec.uri}))
    declared, computed = (provenance.checksum if provenance else None), inventory.get("content_hash")
    if policy.verify_checksum and declared and declared != computed:
        problems.append(ComplianceProblem(
            "checksum_mismatch", f"checksum mismatch: provenance.checksum is {declared}, the files hash to {computed} "
            f"(if the change is intended, `marin sources checksum {source}` prints the value for sources.yaml)",
            {"declared": declared, "computed": computed}))
    return ComplianceVerdict(source, tuple(problems))


def compliance_problems(spec: SourceSpec, inventory: dict, policy: CompliancePolicy) -> list[str]:
    return compliance_verdict(spec.name, spec, inventory, policy).messages


def read_inventory(storage: Storage, source: str, staged: StagedOutput | None = None) -> dict | None:
    """The committed inventory of a source, or the one being written when `staged` is raw/<source>."""
    if staged is not None and staged.final_uri == storage.uri(layout.RAW, source):
        path = staged.join(INVENTORY_NAME)
    elif storage.is_committed(layout.RAW, source):
        path = storage.committed_uri(layout.RAW, source, INVENTORY_NAME)
    else:
        return None
    if not storage.fs.exists(path):
        return None
    with storage.fs.open(path, "r") as f:
        return json.load(f)


def committed_verdict(storage: Storage, source: str, staged: StagedOutput | None = None,
                      registry: SourcesRegistry | None = None, policy: CompliancePolicy | None = None) -> ComplianceVerdict:
    """compliance_verdict on the source's registry entry, its inventory in storage, and the policy, as they are now."""
    registry = registry or load_sources()
    spec = registry.get(source) if source in registry.names else None
    return compliance_verdict(source, spec, read_inventory(storage, source, staged), policy or load_policy())


class SourcesNotClearedError(RuntimeError):
    """An asset refused to read data derived from a source the compliance decision does not clear."""


def require_sources_cleared(storage: Storage, consumer: str, sources, registry: SourcesRegistry | None = None,
                            policy: CompliancePolicy | None = None) -> None:
    """The refusal every consumer makes: raise, naming the consumer, each uncleared source and why.

    No sources at all is a refusal too: data whose sources are unknown cannot be shown to be cleared.
    """
    names = sorted(set(sources))
    if not names:
        raise SourcesNotClearedError(f"{consumer}: no upstream sources given: cannot verify data-use rights")
    registry, policy = registry or load_sources(), policy or load_policy()
    blocked = {}
    for name in names:
        verdict = committed_verdict(storage, name, registry=registry, policy=policy)
        if not verdict.cleared:
            blocked[name] = verdict.messages
    if blocked:
        lines = "\n".join(uncleared_line(name, problems) for name, problems in blocked.items())
        raise SourcesNotClearedError(
            f"{consumer} refuses its input: {len(blocked)} upstream source(s) not cleared for use "
            f"({', '.join(blocked)}):\n{lines}\n"
            "Fix the source or its registry entry, then re-materialize raw_corpus for it.")


def uncleared_line(source: str, problems: list[str]) -> str:
    """How a refusal names one uncleared source: the same line whichever asset refuses."""
    return f"  - {source}: {'; '.join(problems)}"
