"""Licenses and data-use rights of raw sources, propagated down the lineage, and the training gate.

A source's license comes from the sources registry; whether it may be used is the one compliance
decision, `data.compliance.compliance_verdict`, on the registry entry, the policy and the source's
committed `raw/<source>/inventory.json` (the same verdict the `compliance` check reports and the
cleaning gate uses). Every downstream output lists the licenses and verdicts of the sources it
derives from; every consumer of a mixture refuses an uncleared one (`require_mixture_cleared`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from marin_assets.core import layout
from marin_assets.core.storage import MANIFEST_NAME, StagedOutput, Storage
from marin_assets.data.sources.compliance import INVENTORY_NAME, committed_verdict, load_policy, require_sources_cleared
from marin_assets.data.sources.compliance import SourcesNotClearedError  # noqa: F401 (re-exported: the one refusal)
from marin_assets.data.sources.compliance import read_inventory  # noqa: F401 (re-exported for the governance tools)
from marin_assets.data.sources.source_registry import SourcesRegistry, load_sources

# What a license lets us do with the data, by SPDX id prefix (first match wins; order matters:
# "CC-BY-NC" must be tested before "CC-BY"). Anything else needs a human review.
_TERMS_BY_PREFIX = (
    ("CC0", "public-domain"),
    ("Unlicense", "public-domain"),
    ("CC-BY-NC", "non-commercial"),
    ("CC-BY-ND", "no-derivatives"),
    ("CC-BY-SA", "share-alike"),
    ("CC-BY", "attribution"),
    ("AGPL", "copyleft"),
    ("LGPL", "copyleft"),
    ("GPL", "copyleft"),
    ("MPL", "copyleft"),
    ("0BSD", "permissive"),
    ("MIT", "permissive"),
    ("BSD", "permissive"),
    ("Apache", "permissive"),
    ("PSF", "permissive"),
    ("ISC", "permissive"),
    ("Zlib", "permissive"),
    ("LicenseRef-", "custom terms"),
)
UNREVIEWED_TERMS = "unreviewed"


def licenses_for_sources(registry: SourcesRegistry, names: Iterable[str]) -> dict[str, str]:
    """SPDX license of each named source; an unknown name is an error naming the known ones."""
    return {name: registry.get(name).license for name in sorted(set(names))}


def sources_behind(storage: Storage, output_uris: Iterable[str]) -> list[str]:
    """The raw sources behind committed outputs: the union of their manifests' `licenses`.

    E.g. a training run gates on `sources_behind(storage, [storage.committed_uri(layout.MIXTURES, name)])`.
    """
    names: set[str] = set()
    for uri in output_uris:
        path = f"{storage.follow(uri).rstrip('/')}/{MANIFEST_NAME}"
        if storage.fs.exists(path):
            with storage.fs.open(path, "r") as f:
                names |= set(json.load(f).get("licenses", {}))
    return sorted(names)


def data_use_terms(spdx: str) -> str:
    for prefix, terms in _TERMS_BY_PREFIX:
        if spdx.startswith(prefix):
            return terms
    return UNREVIEWED_TERMS


def compliance_from_inventory(inventory: dict | None, source: str) -> dict:
    """{"cleared": bool | None, "problems": [...]} from an inventory (None: never inventoried)."""
    if inventory is None:
        return {"cleared": None, "problems": [f"raw_corpus[{source}] has no committed inventory"]}
    verdict = inventory.get("compliance")
    if not isinstance(verdict, dict) or not isinstance(verdict.get("cleared"), bool):
        return {"cleared": False, "problems": [f"{source}/{INVENTORY_NAME} has no compliance verdict"]}
    return {"cleared": verdict["cleared"], "problems": [str(p) for p in verdict.get("problems", [])]}


def data_use_for_sources(
    storage: Storage, registry: SourcesRegistry, names: Iterable[str], staged: StagedOutput | None = None
) -> dict[str, dict]:
    """Per source: license terms plus its compliance verdict, as recorded in manifests."""
    out = {}
    policy = load_policy()
    for name, spdx in licenses_for_sources(registry, names).items():
        verdict = committed_verdict(storage, name, staged, registry, policy).as_json()
        out[name] = {"license": spdx, "terms": data_use_terms(spdx), "cleared": verdict["cleared"],
                     "problems": verdict["problems"]}
    return out


def uncleared_sources(storage: Storage, names: Iterable[str]) -> dict[str, list[str]]:
    """Sources without a passing verdict, each with the reasons."""
    registry, policy = load_sources(), load_policy()
    out = {}
    for name in sorted(set(names)):
        verdict = committed_verdict(storage, name, registry=registry, policy=policy)
        if not verdict.cleared:
            out[name] = verdict.messages
    return out


def require_mixture_cleared(storage: Storage, consumer: str, mixture: str) -> None:
    """The compliance refusal of an asset that reads a mixture: on the sources its manifest names."""
    require_sources_cleared(storage, consumer, sources_behind(storage, [storage.uri(layout.MIXTURES, mixture)]))
