"""One provenance helper: every materialization records what made it.

`build_manifest` returns the JSON-able manifest that is written beside the output and flattened
into Dagster metadata, so the UI and the storage root tell the same story.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from marin_assets.core.environment import environment_snapshot
from marin_assets.core.hashing import hash_json

MANIFEST_VERSION = 1


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
    extra: dict | None = None,
) -> dict:
    """inputs maps upstream asset (and partition) names to their data versions."""
    recipe_json = recipe.model_dump(mode="json") if hasattr(recipe, "model_dump") else recipe
    now = dt.datetime.now(dt.UTC)
    return {
        "manifest_version": MANIFEST_VERSION,
        "asset": asset,
        "partition": partition,
        "recipe": recipe_json,
        "recipe_hash": hash_json(recipe_json),
        "code_version": code_version,
        "environment": environment_snapshot(),
        "devices": devices or [],
        "inputs": dict(sorted(inputs.items())),
        "output_uri": output_uri,
        "output_hash": output_hash,
        "stats": stats or {},
        "run_id": run_id,
        "started_at": (started_at or now).isoformat(),
        "finished_at": now.isoformat(),
        **(extra or {}),
    }


def manifest_metadata(manifest: dict) -> dict[str, Any]:
    """Flat, UI-friendly metadata values (plain str/int/float) from a manifest."""
    env = manifest["environment"]
    meta: dict[str, Any] = {
        "recipe_hash": manifest["recipe_hash"],
        "code_version": manifest["code_version"],
        "git_commit": env["git_commit"],
        "git_dirty": str(env["git_dirty"]),
        "uv_lock_sha256": env["uv_lock_sha256"],
        "python": env["python"],
        "library_versions": ", ".join(f"{k}={v}" for k, v in env["libraries"].items()),
        "output_uri": manifest["output_uri"],
        "output_hash": manifest["output_hash"],
        "input_data_versions": ", ".join(f"{k}={v[:12]}" for k, v in manifest["inputs"].items()) or "none",
    }
    if manifest["devices"]:
        meta["devices"] = ", ".join(manifest["devices"])
    for key, value in manifest["stats"].items():
        if isinstance(value, (int, float, str, bool)):
            meta[key] = value
    return meta
