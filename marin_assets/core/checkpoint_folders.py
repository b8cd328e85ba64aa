"""Which steps of a run's checkpoint folder are complete (orbax writes its marker file last).

Shared by the train stage (resume, the final checkpoint) and the failure catalog (a failed run's last
complete checkpoint), so neither stage imports the other.
"""

from __future__ import annotations

import fsspec

# orbax writes this file last when a step folder is complete (temporary folders have other names)
COMPLETE_MARKER = "_CHECKPOINT_METADATA"
# Run tag a training launch sets to its run's checkpoint folder (train.launchers): the failure catalog
# links the last complete checkpoint a failed run left there, the point a retry resumes from.
CHECKPOINTS_TAG = "marin/checkpoints_dir"


def checkpoint_steps(checkpoints_dir: str) -> list[int]:
    """Steps with a complete checkpoint, ascending (partial or temporary folders are ignored)."""
    fs, path = fsspec.core.url_to_fs(checkpoints_dir)
    if not fs.exists(path):
        return []
    steps = []
    for entry in fs.ls(path, detail=False):
        name = entry.rstrip("/").rsplit("/", 1)[-1]
        if name.isdigit() and fs.exists(f"{entry.rstrip('/')}/{COMPLETE_MARKER}"):
            steps.append(int(name))
    return sorted(steps)


def latest_checkpoint_step(checkpoints_dir: str) -> int | None:
    steps = checkpoint_steps(checkpoints_dir)
    return steps[-1] if steps else None


def checkpoint_uri(checkpoints_dir: str, step: int) -> str:
    return f"{checkpoints_dir.rstrip('/')}/{step}"
