"""Shared bits of the governance commands: which storage root to read."""

from __future__ import annotations

import argparse
import os

from marin_assets.core.storage import Storage
from marin_assets.resources import resources_for


def add_storage_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--storage-root",
        help="storage root URI (default: the MARIN_ENV environment's, i.e. $MARIN_STORAGE_ROOT or .marin/storage)",
    )


def resolve_storage(root: str | None) -> Storage:
    if root:
        return Storage(root)
    configured = resources_for()["storage"].root_uri
    # Production binds an EnvVar: resolve it here the way Dagster would at run time.
    value = configured.get_value() if hasattr(configured, "get_value") else configured
    if not value:
        raise SystemExit(f"no storage root: pass --storage-root or set MARIN_STORAGE_ROOT (MARIN_ENV={os.environ.get('MARIN_ENV', 'local')})")
    return Storage(value)
