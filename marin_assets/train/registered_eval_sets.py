"""Every registered eval set, prepared for one run by whichever launcher starts it (local or TPU slice).

One call for both launchers, so both evaluate the same sets and both say which ones they will not
evaluate and why (an eval set that is not materialized, or shares a source's name), as a warning in
the run's log. Kept apart from eval_set_texts, which is part of the runs' code version and so must
not import the data stage's registry.
"""

from __future__ import annotations

from marin_assets.core.storage import Storage
from marin_assets.data.curate.eval_sets import load_eval_sets
from marin_assets.train import eval_set_texts


def prepare_registered_eval_sets(storage: Storage, mixture_info, run_dir: str, log) -> dict:
    """Write the run's eval-set shards and manifest (eval_set_texts.prepare); warn once per missing set."""
    manifest = eval_set_texts.prepare(storage, mixture_info, run_dir, load_eval_sets().names)
    for name, why in manifest["missing"].items():
        log.warning(f"eval set {name} will not be evaluated: {why}")
    return manifest
