"""MaxText/orbax checkpoints: which steps are complete, and a content hash of a checkpoint.

Checkpoint file bytes are not reproducible (random OCDBT file names, timestamps, absolute paths),
so a checkpoint's data version is the hash of its restored arrays: every leaf's key path, dtype,
shape and bytes. Two runs that trained identically (e.g. interrupted + resumed vs uninterrupted)
get the same hash. Folder `checkpoints/<N>` holds the state after train step N.
"""

from __future__ import annotations

import os

from marin_assets.core.hashing import combine_hashes, sha256_bytes

# Which steps are complete lives in core (the failure catalog reads it too, without the train stage).
from marin_assets.core.checkpoint_folders import (  # noqa: E402,F401 (re-exported)
    CHECKPOINTS_TAG, COMPLETE_MARKER, checkpoint_steps, checkpoint_uri, latest_checkpoint_step,
)


def logical_hash(checkpoint_dir: str) -> tuple[str, int]:
    """(sha256 over the restored train state, number of leaves). Imports JAX/orbax: call it where
    they are already loaded (the training process) rather than in the orchestrator."""
    import jax
    import numpy as np
    import orbax.checkpoint as ocp

    items = checkpoint_dir.rstrip("/") + "/items"
    if "://" not in items:
        items = os.path.abspath(items)  # orbax requires absolute paths
    state = ocp.PyTreeCheckpointer().restore(items)
    leaves = jax.tree_util.tree_flatten_with_path(state)[0]
    named = []
    for key_path, value in leaves:
        if hasattr(value, "dtype") and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            value = jax.random.key_data(value)
        array = np.ascontiguousarray(np.asarray(value))
        header = f"{array.dtype}|{array.shape}|".encode()
        named.append((jax.tree_util.keystr(key_path), sha256_bytes(header + array.tobytes())))
    return combine_hashes(named), len(named)
