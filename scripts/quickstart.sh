#!/usr/bin/env bash
# One command: install everything, then materialize the whole graph on the shipped sample corpus.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$REPO"
exec "$REPO/.venv/bin/marin" materialize-all "$@"
