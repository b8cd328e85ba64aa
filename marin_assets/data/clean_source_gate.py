"""The cleaning stage's compliance gate: only sources whose raw inventory is cleared are cleaned."""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.governance.licenses import compliance_from_inventory, read_inventory


class SourceNotCleared(RuntimeError):
    pass


def require_cleared(storage: Storage, source: str) -> None:
    """Raise unless raw/<source> is committed and its inventory says the source is cleared."""
    storage.require_committed(layout.RAW, source)
    verdict = compliance_from_inventory(read_inventory(storage, source), source)
    if verdict["cleared"] is not True:
        problems = "; ".join(verdict["problems"]) or "no compliance verdict"
        raise SourceNotCleared(f"source {source!r} is not cleared for use, refusing to clean it: {problems}")


def dedup_peers(storage: Storage, source: str, scope: str, names: list[str]) -> list[str]:
    """The other sources a source's dedup runs against: none (scope source), or every other source
    whose raw inventory is committed and cleared (scope global; uncleared sources never take part)."""
    if scope == "source":
        return []
    peers = []
    for name in sorted(names):
        if name != source and storage.is_committed(layout.RAW, name):
            if compliance_from_inventory(read_inventory(storage, name), name)["cleared"] is True:
                peers.append(name)
    return peers
