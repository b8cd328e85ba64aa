"""Before MaxText restores, prove the newest checkpoint restorable; set a damaged one aside, by name.

Orbax marks a step complete with `_CHECKPOINT_METADATA`, but a full disk or a truncated file can
leave a marked step that cannot be restored (no `items/_METADATA`, a cut OCDBT data file), and
MaxText would then fail on it at every retry. So the trainer (where JAX/orbax are already loaded)
checks the newest complete step before training: its JSON metadata (orbax's own and the grain
iterator state) must parse, and its arrays must restore (`logical_hash`) when the checkpoint is at
most `MARIN_CHECKPOINT_VERIFY_MAX_BYTES` (default 4 GiB; above it, metadata and file sizes only). A
damaged step is renamed `damaged-<step>-<time>` (orbax ignores non-numeric folders; nothing is
deleted) and the next older one is checked, so the run resumes from the newest good checkpoint.
Local checkpoint folders only: on gs:// (TPU pods) there is no rename, and orbax restores as before.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from marin_assets.train.checkpoints import COMPLETE_MARKER, checkpoint_steps, checkpoint_uri, logical_hash

VERIFY_MAX_ENV = "MARIN_CHECKPOINT_VERIFY_MAX_BYTES"
DEFAULT_VERIFY_MAX_BYTES = 4 * 2**30
DAMAGED_PREFIX = "damaged-"
ITEMS_METADATA = "items/_METADATA"


class DamagedCheckpoint(Exception):
    pass


@dataclass
class CheckpointVerdict:
    step: int | None  # the newest good step (None: none left, training starts from scratch)
    set_aside: dict[int, str] = field(default_factory=dict)  # damaged step -> where it was moved


def _files(folder: str) -> list[tuple[str, int]]:
    out = []
    for parent, _, names in os.walk(folder):
        out.extend((os.path.join(parent, n), os.path.getsize(os.path.join(parent, n))) for n in names)
    return out


def check_checkpoint(folder: str, restore: bool | None = None) -> None:
    """Raise DamagedCheckpoint saying what is wrong with the checkpoint folder `folder`."""
    if not os.path.exists(os.path.join(folder, ITEMS_METADATA)):
        raise DamagedCheckpoint(f"{ITEMS_METADATA} is missing (the save did not finish)")
    files = _files(folder)
    for path, size in files:
        name = os.path.basename(path)
        if name.endswith(".json") or name in (COMPLETE_MARKER, "_METADATA"):
            try:
                with open(path) as f:
                    json.load(f)
            except (OSError, ValueError) as exc:
                raise DamagedCheckpoint(f"{os.path.relpath(path, folder)} is unreadable ({size} bytes): {exc}") from exc
        elif size == 0 and "/d/" in path:
            raise DamagedCheckpoint(f"data file {os.path.relpath(path, folder)} is empty")
    if restore is None:
        restore = sum(size for _, size in files) <= verify_limit()
    if restore:
        try:
            logical_hash(folder)
        except Exception as exc:  # noqa: BLE001 - any failure to restore is the verdict
            raise DamagedCheckpoint(f"its arrays do not restore: {type(exc).__name__}: {str(exc)[:300]}") from exc


def verify_limit() -> int:
    value = os.environ.get(VERIFY_MAX_ENV, str(DEFAULT_VERIFY_MAX_BYTES))
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{VERIFY_MAX_ENV}={value!r} is not a number of bytes") from None


def newest_good_checkpoint(checkpoints_dir: str, warn: Callable[[str], None]) -> CheckpointVerdict:
    """Check complete steps newest first; move each damaged one aside (and `warn` naming it) until a good one."""
    verdict = CheckpointVerdict(step=None)
    if "://" in checkpoints_dir:  # object stores (TPU pods on gs://): no rename; orbax restores as before
        verdict.step = (checkpoint_steps(checkpoints_dir) or [None])[-1]
        return verdict
    for step in reversed(checkpoint_steps(checkpoints_dir)):
        folder = checkpoint_uri(checkpoints_dir, step)
        try:
            check_checkpoint(folder)
        except DamagedCheckpoint as exc:
            aside = os.path.join(checkpoints_dir, f"{DAMAGED_PREFIX}{step}-{time.strftime('%Y%m%dT%H%M%S')}")
            os.rename(folder, aside)
            verdict.set_aside[step] = aside
            warn(f"checkpoint {step} at {folder} is damaged ({exc}); set aside as {aside}")
            continue
        verdict.step = step
        break
    return verdict
