#!/usr/bin/env bash
# One unattended GPU check (< 8 minutes on one NVIDIA GPU, network optional): trains the ladder's
# 150m architecture (seq 2048) and a tiny model through Dagster and prints tokens/s, MFU, goodput, peak
# memory vs preflight's estimate and the loss curves (benchmarks/gpu_check.py).
#
#   bash scripts/gpu_check.sh [--wheels DIR] [--dry-run] [benchmarks/gpu_check.py options]
#
# CUDA JAX, in this order (the script says which it used): the venv's own CUDA plugin when its version
# is jax's; wheels brought along in --wheels DIR (no network: jax-cuda12-plugin, jax-cuda12-pjrt and the
# nvidia-* wheels they need); else `uv sync --extra gpu` (PyPI). --dry-run needs no GPU and installs nothing.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIMIT_S="${MARIN_GPU_CHECK_LIMIT_S:-470}"
WHEELS="" DRY=0 PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --wheels) [ $# -ge 2 ] || { echo "error: --wheels needs a folder" >&2; exit 2; }; WHEELS="$2"; shift 2 ;;
    --wheels=*) WHEELS="${1#--wheels=}"; shift ;;
    --dry-run) DRY=1; PASS+=("$1"); shift ;;
    *) PASS+=("$1"); shift ;;
  esac
done
if [ -n "$WHEELS" ] && [ ! -d "$WHEELS" ]; then
  echo "error: --wheels $WHEELS is not a folder" >&2; exit 2
fi
PY="$REPO/.venv/bin/python"
plugin_ok() {
  [ -x "$PY" ] && "$PY" -c 'from marin_assets.train.gpu_environment import installed_versions, plugin_problems
import sys; sys.exit(1 if plugin_problems(installed_versions()) else 0)' >/dev/null 2>&1
}
if [ "$DRY" = 1 ]; then
  source "$REPO/scripts/env.sh"
  echo "CUDA JAX: not needed (dry run)"
elif plugin_ok; then   # no sync: env.sh would remove a plugin installed beside the lock
  export DAGSTER_HOME="${DAGSTER_HOME:-$REPO/.marin/dagster_home}" PATH="$REPO/.venv/bin:$PATH"
  echo "CUDA JAX: the venv's installed plugin (its version is jax's)"
elif [ -n "$WHEELS" ]; then
  source "$REPO/scripts/env.sh"
  JAX_VERSION="$("$PY" -c 'from importlib.metadata import version; print(version("jax"))')"
  "$REPO/.tools/bin/uv" pip install --python "$PY" --no-index --find-links "$WHEELS" \
    "jax-cuda12-plugin[with-cuda]==$JAX_VERSION" "jax-cuda12-pjrt==$JAX_VERSION"
  echo "CUDA JAX: installed from the wheels in $WHEELS"
else
  MARIN_EXTRAS=gpu source "$REPO/scripts/env.sh"
  echo "CUDA JAX: uv sync --extra gpu (from the lock, PyPI)"
fi
exec timeout --signal=TERM --kill-after=20 "$LIMIT_S" "$PY" "$REPO/benchmarks/gpu_check.py" "${PASS[@]}"
