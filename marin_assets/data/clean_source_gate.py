"""The cleaning stage's compliance gate: only sources the compliance decision clears are cleaned."""

from __future__ import annotations

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.compliance import committed_verdict


class SourceNotCleared(RuntimeError):
    pass


def require_cleared(storage: Storage, source: str) -> None:
    """Raise unless raw/<source> is committed and the compliance verdict on it clears the source."""
    storage.require_committed(layout.RAW, source)
    verdict = committed_verdict(storage, source)
    if not verdict.cleared:
        raise SourceNotCleared(f"source {source!r} is not cleared for use, refusing to clean it: "
                               f"{'; '.join(verdict.messages)}")


def dedup_peers(storage: Storage, source: str, scope: str, names: list[str]) -> list[str]:
    """The other sources a source's dedup runs against: none (scope source), or every other source
    whose raw inventory is committed and cleared (scope global; uncleared sources never take part)."""
    if scope == "source":
        return []
    return [name for name in sorted(names)
            if name != source and storage.is_committed(layout.RAW, name) and committed_verdict(storage, name).cleared]
