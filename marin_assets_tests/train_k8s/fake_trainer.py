"""The container command the stub kubelet runs in launcher tests: a multi-host job in miniature.

    python -m marin_assets_tests.train_k8s.fake_trainer ok|fail|hang

ok:   every worker prints its placement; the lead reports through Pipes (GCS) and all exit 0.
fail: worker 1 dies with an out-of-memory style error; the others wait (as on collectives) until killed.
hang: every worker waits until killed (for cancel and timeout tests).
"""

import os
import sys
import time

from marin_assets.train.k8s.pod_pipes import open_worker_pipes

PLACEMENT_ENV = ("MARIN_WORKER_ID", "MARIN_SLICE_ID", "TPU_WORKER_ID", "TPU_WORKER_HOSTNAMES", "MEGASCALE_SLICE_ID",
                 "MEGASCALE_NUM_SLICES", "MEGASCALE_COORDINATOR_ADDRESS", "MARIN_RUN_NAME", "MARIN_OUTPUT_URI")


def main(mode: str) -> None:
    placement = {k: os.environ[k] for k in PLACEMENT_ENV if k in os.environ}
    print(f"placement {placement}", flush=True)
    with open_worker_pipes() as pipes:
        if mode == "fail" and placement["MARIN_WORKER_ID"] == "1":
            time.sleep(0.5)
            print("RESOURCE_EXHAUSTED: ran out of HBM allocating 12.5G", flush=True)
            sys.exit(3)
        if mode in ("fail", "hang"):
            time.sleep(300)
        if pipes is not None:
            pipes.log.info("lead worker reporting")
            pipes.report_custom_message(placement)
            pipes.report_asset_materialization(metadata={"final_eval_loss": 2.5})


if __name__ == "__main__":
    main(sys.argv[1])
