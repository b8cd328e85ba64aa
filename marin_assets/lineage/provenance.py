"""One provenance helper: every materialization records what made it.

`build_manifest` returns the JSON-able manifest that is written beside the output and flattened
into Dagster metadata, so the UI and the storage root tell the same story.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from marin_assets.core.environment import environment_snapshot
from marin_assets.core.hashing import hash_json

MANIFEST_VERSION = 2  # 2: partition-aware inputs, input_uris, licenses, data_use


def build_manifest(
    *,
    asset: str,
    partition: str | None,
    recipe: Any,
    code_version: str,
    inputs: dict[str, str],
    output_uri: str,
    output_hash: str,
    stats: dict | None = None,
    run_id: str | None = None,
    started_at: dt.datetime | None = None,
    devices: list[str] | None = None,
    input_uris: dict[str, str] | None = None,
    licenses: dict[str, str] | None = None,
    data_use: dict[str, dict] | None = None,
    extra: dict | None = None,
) -> dict:
    """inputs maps upstream "asset" or "asset[partition]" labels to their data versions, input_uris
    the same labels to where those outputs live (so an audit can walk the chain from files alone).

    licenses maps each raw source this output derives from to its SPDX id; data_use maps it to
    {"terms", "cleared", "problems"} (see data/licenses.py). devices defaults to the JAX
    devices of this process when JAX is imported.
    """
    recipe_json = recipe.model_dump(mode="json") if hasattr(recipe, "model_dump") else recipe
    now = dt.datetime.now(dt.UTC)
    environment = environment_snapshot()
    return {
        "manifest_version": MANIFEST_VERSION,
        "asset": asset,
        "partition": partition,
        "recipe": recipe_json,
        "recipe_hash": hash_json(recipe_json),
        "code_version": code_version,
        "environment": environment,
        "devices": list(devices) if devices is not None else environment["jax_devices"],
        "inputs": dict(sorted(inputs.items())),
        "input_uris": dict(sorted((input_uris or {}).items())),
        "licenses": dict(sorted((licenses or {}).items())),
        "data_use": dict(sorted((data_use or {}).items())),
        "output_uri": output_uri,
        "output_hash": output_hash,
        "stats": stats or {},
        "run_id": run_id,
        "started_at": (started_at or now).isoformat(),
        "finished_at": now.isoformat(),
        **(extra or {}),
    }


def summary_metadata(manifest: dict) -> dict[str, Any]:
    """The scalar stats of an output, shown first in the UI: the numbers a researcher looks for."""
    return {k: v for k, v in manifest["stats"].items() if isinstance(v, (int, float, str, bool))}


def lineage_metadata(manifest: dict) -> dict[str, Any]:
    """Licenses and data use, one short row each: what may be done with this output."""
    meta: dict[str, Any] = {}
    if manifest.get("licenses"):
        meta["licenses"] = ", ".join(f"{src}={spdx}" for src, spdx in manifest["licenses"].items())
    if manifest.get("data_use"):
        meta["data_use"] = ", ".join(f"{src}={_data_use_text(use)}" for src, use in manifest["data_use"].items())
    return meta


def provenance_summary(manifest: dict) -> dict[str, Any]:
    """What made an output, as one structured value (a single metadata entry, not a dozen rows).

    The Spark version is named only when Spark ran in the process that wrote the output.
    """
    env = manifest["environment"]
    out: dict[str, Any] = {
        "recipe_hash": manifest["recipe_hash"],
        "code_version": manifest["code_version"],
        "output_hash": manifest["output_hash"],
        "inputs": {k: v[:12] for k, v in manifest["inputs"].items()},
        "git_commit": env["git_commit"],
        "git_dirty": env["git_dirty"],
        "uv_lock_sha256": env["uv_lock_sha256"],
        "python": env["python"],
        "libraries": env["libraries"],
    }
    if env.get("spark"):
        out["spark_version"] = env["spark"]
    if manifest["devices"]:
        out["devices"] = manifest["devices"]
    return out


def manifest_metadata(manifest: dict) -> dict[str, Any]:
    """Plain (str/int/float/dict) metadata from a manifest: summary first, then lineage, then provenance."""
    return {
        **summary_metadata(manifest),
        **lineage_metadata(manifest),
        "output_uri": manifest["output_uri"],
        "input_data_versions": ", ".join(f"{k}={v[:12]}" for k, v in manifest["inputs"].items()) or "none",
        "provenance": provenance_summary(manifest),
    }


def _data_use_text(use: dict) -> str:
    verdict = {True: "cleared", False: "NOT CLEARED", None: "unverified"}[use.get("cleared")]
    return f"{use.get('terms', 'unknown')} ({verdict})"
