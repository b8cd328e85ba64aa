"""The cleaning stage's compliance gate: only sources whose raw inventory is cleared are cleaned."""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.licenses import compliance_from_inventory, read_inventory


class SourceNotCleared(RuntimeError):
    pass


def require_cleared(storage: Storage, source: str) -> None:
    """Raise unless raw/<source> is committed and its inventory says the source is cleared."""
    storage.require_committed(layout.RAW, source)
    verdict = compliance_from_inventory(read_inventory(storage, source), source)
    if verdict["cleared"] is not True:
        problems = "; ".join(verdict["problems"]) or "no compliance verdict"
        raise SourceNotCleared(f"source {source!r} is not cleared for use, refusing to clean it: {problems}")
