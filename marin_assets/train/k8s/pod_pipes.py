"""Pod side of Dagster Pipes for slice launches: runs in the training image (no dagster there).

Every pod of a slice gets the same Pipes environment; only the lead process (worker 0 of slice 0)
opens the session, so the asset sees one stream of logs and one result. The launcher sets
MARIN_PIPES_TRANSPORT=gcs: the context is read from, and messages are written to, a GCS bucket
(dagster-gcp's PipesGCSContextInjector / PipesGCSMessageReader on the orchestrator side). Without
it the default Pipes transport (env/file/stdio) is used, as for local subprocess launches.

    with open_worker_pipes() as pipes:   # None outside Dagster and on non-lead workers
        ...
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext

from marin_assets.core.gcs_client import gcs_client

PIPES_TRANSPORT_ENV = "MARIN_PIPES_TRANSPORT"
PIPES_INTERVAL_ENV = "MARIN_PIPES_INTERVAL_S"   # seconds between message uploads (default 10)
PIPES_CONTEXT_ENV = "DAGSTER_PIPES_CONTEXT"


def is_lead_process(env=os.environ) -> bool:
    return env.get("MARIN_WORKER_ID", "0") == "0" and env.get("MARIN_SLICE_ID", "0") == "0"


def open_worker_pipes() -> AbstractContextManager:
    if not os.environ.get(PIPES_CONTEXT_ENV) or not is_lead_process():
        return nullcontext(None)
    from dagster_pipes import open_dagster_pipes

    if os.environ.get(PIPES_TRANSPORT_ENV) == "gcs":
        from dagster_pipes import PipesGCSContextLoader, PipesGCSMessageWriter

        client = gcs_client()
        interval = float(os.environ.get(PIPES_INTERVAL_ENV, "10"))
        return open_dagster_pipes(context_loader=PipesGCSContextLoader(client=client),
                                  message_writer=PipesGCSMessageWriter(client=client, interval=interval))
    return open_dagster_pipes()
