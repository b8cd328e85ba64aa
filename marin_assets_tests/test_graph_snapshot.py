"""The asset graph is a public contract: any change to keys, deps, partitions or checks must be deliberate.

Regenerate after an intended change: MARIN_UPDATE_SNAPSHOTS=1 pytest marin_assets_tests/test_graph_snapshot.py
"""

import json
import os
from pathlib import Path

from marin_assets_tests.graph_snapshot import graph_snapshot

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.json"


def test_asset_graph_matches_snapshot():
    from marin_assets.definitions import defs

    current = graph_snapshot(defs)
    if os.environ.get("MARIN_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    assert current == expected, (
        "asset graph changed; if intended, regenerate with MARIN_UPDATE_SNAPSHOTS=1 "
        f"(diff keys: {sorted(set(current['assets']) ^ set(expected['assets']))})"
    )
