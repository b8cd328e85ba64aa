"""Which peers a source's dedup runs against: only sources the compliance decision clears take part."""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.sources.compliance import committed_verdict


def dedup_peers(storage: Storage, source: str, scope: str, names: list[str]) -> list[str]:
    """The other sources a source's dedup runs against: none (scope source), or every other source
    whose raw inventory is committed and cleared (scope global; uncleared sources never take part)."""
    if scope == "source":
        return []
    return [name for name in sorted(names)
            if name != source and storage.is_committed(layout.RAW, name) and committed_verdict(storage, name).cleared]
