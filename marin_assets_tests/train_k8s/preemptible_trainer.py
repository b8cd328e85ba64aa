"""The container command of the pod-preemption test: a multi-host trainer in miniature.

    python -m marin_assets_tests.train_k8s.preemptible_trainer CHECKPOINTS_DIR STEPS

Every host runs STEPS steps (0.1 s each) from the latest complete checkpoint, under the real
`trainer_guard.Preemption` (SIGTERM -> finish the step, checkpoint it, exit EXIT_PREEMPTED with
maxtext_entry's `TrainingPreempted:` line). A checkpoint is what orbax writes on a slice: each
host its own shard under `<step>/`, and the lead host finalizes the step (`_CHECKPOINT_METADATA`)
only once every host's shard is there, so a step not every host saved is never complete. The
lead reports the step it resumed from and the last step through Pipes.
"""

import json
import os
import sys
import time
from pathlib import Path

from marin_assets.train.checkpoints import COMPLETE_MARKER, latest_checkpoint_step
from marin_assets.train.k8s.pod_pipes import open_worker_pipes
from marin_assets.train.maxtext_entry import EXIT_PREEMPTED, PREEMPTED_MARKER
from marin_assets.train.trainer_guard import Preemption

PERIOD = 5


def save(checkpoints: Path, step: int, worker: int, hosts: int) -> None:
    folder = checkpoints / str(step)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"shard-{worker}.json").write_text(json.dumps({"step": step}))
    if worker != 0:
        return
    deadline = time.monotonic() + 2  # the lead waits for the other hosts' shards, as orbax's finalize does
    while time.monotonic() < deadline:
        if all((folder / f"shard-{host}.json").exists() for host in range(hosts)):
            (folder / COMPLETE_MARKER).write_text("{}")
            return
        time.sleep(0.05)


def main(checkpoints_dir: str, steps: int) -> None:
    preemption = Preemption().install()
    worker, hosts = int(os.environ["MARIN_WORKER_ID"]), int(os.environ["MARIN_HOSTS"])
    checkpoints = Path(checkpoints_dir)
    latest = latest_checkpoint_step(checkpoints_dir)
    start = 0 if latest is None else latest + 1
    print(f"worker {worker}: starting at step {start}", flush=True)
    with open_worker_pipes() as pipes:
        for step in range(start, steps):
            time.sleep(0.1)  # the step
            print(f"worker {worker}: completed step {step}", flush=True)
            if preemption.requested.is_set():
                save(checkpoints, step, worker, hosts)
                print(f"{PREEMPTED_MARKER}preempted by {preemption.signal_name} after step {step}; "
                      f"checkpoint {step} saved, a retry resumes from it", flush=True)
                sys.exit(EXIT_PREEMPTED)
            if step % PERIOD == 0 or step == steps - 1:
                save(checkpoints, step, worker, hosts)
        if pipes is not None:
            pipes.report_custom_message({"resumed_from": latest, "last_step": steps - 1})


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
