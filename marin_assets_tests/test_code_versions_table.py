"""The generated module -> assets table (`marin versions`) is committed and kept current.

Regenerate after an intended change: MARIN_UPDATE_SNAPSHOTS=1 pytest marin_assets_tests/test_code_versions_table.py
"""

import os
from pathlib import Path

from marin_assets.core import layering

TABLE = Path(__file__).parent / "snapshots" / "code_versions.md"


def test_committed_table_is_what_marin_versions_prints():
    from marin_assets.definitions import defs
    from marin_assets.versions import render

    current = render(defs)
    if os.environ.get("MARIN_UPDATE_SNAPSHOTS") == "1":
        TABLE.write_text(current)
    assert current == TABLE.read_text(), "module imports changed; regenerate with MARIN_UPDATE_SNAPSHOTS=1"


def test_every_versioned_asset_is_derived_and_versions_only_pure_code():
    from marin_assets.definitions import defs
    from marin_assets.versions import assets_by_module, unversioned_assets

    assert unversioned_assets(defs) == []
    kinds = layering.kinds()
    impure = {m: a for m, a in assets_by_module(defs).items() if a and kinds[m] != "pure"}
    assert impure == {}, "a code version covers Dagster code: an edit of wiring would stale outputs"
