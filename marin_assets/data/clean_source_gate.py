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
