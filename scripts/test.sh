#!/usr/bin/env bash
# One command: install everything, then run the whole test suite (slow end-to-end tests included).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$REPO"
exec "$REPO/.venv/bin/python" -m pytest "$@"
