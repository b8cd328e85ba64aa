#!/usr/bin/env bash
# A local Spark standalone cluster (1 master + 2 workers, separate JVMs from the pyspark package):
#   bash scripts/spark_cluster.sh start [--port 7077] [--workers 2] [--worker-cores 1] [--worker-memory 1g]
#   export MARIN_SPARK_MASTER=spark://127.0.0.1:7077   # then materialize as usual
#   bash scripts/spark_cluster.sh status | stop
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$REPO"
exec "$REPO/.venv/bin/python" -m marin_assets.resources.spark_cluster "$@"
