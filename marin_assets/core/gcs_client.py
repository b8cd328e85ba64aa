"""The google-cloud-storage client every Pipes-over-GCS side uses (TPU pods, Dataproc drivers, the asset).

Workload identity or the cluster's service account in production; anonymous credentials against
the GCS emulator (STORAGE_EMULATOR_HOST) in tests. Imports nothing of Dagster: the training image
and the Dataproc driver load it too.
"""

from __future__ import annotations

import os


def gcs_client():
    from google.cloud import storage

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project="emulator", credentials=AnonymousCredentials())
    return storage.Client()
