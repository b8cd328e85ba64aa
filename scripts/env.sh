# Sourced by the other scripts and by users (`source scripts/env.sh`): finds Python 3.12 and Java 17+,
# installs uv and the locked environment, then exports REPO, DAGSTER_HOME and PATH. The installation runs
# in a subshell under `set -euo pipefail`, so a failure stops it without changing the caller's shell
# options (an interactive shell that sourced this must not exit on its next failing command).
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export UV_PYTHON_DOWNLOADS=never
export DAGSTER_HOME="${DAGSTER_HOME:-$REPO/.marin/dagster_home}"

_marin_install() (
set -euo pipefail

find_python312() {
  local candidate
  for candidate in "$(command -v python3.12 || true)" \
                   $(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/bin/python3.12 2>/dev/null) \
                   /usr/bin/python3.12 /usr/local/bin/python3.12; do
    # A pyenv shim exists on PATH but fails unless pyenv exposes 3.12: run it to be sure.
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

PYTHON312="$(find_python312)" || {
  echo "error: Python 3.12 not found. Install it (Debian/Ubuntu: 'apt-get install python3.12 python3.12-venv'," >&2
  echo "       or 'pyenv install 3.12') and run this again." >&2
  exit 1
}

check_java() {
  local version
  if ! command -v java >/dev/null 2>&1; then
    echo "error: Java 17+ is needed by Spark and was not found. Install it: 'sudo apt-get install openjdk-17-jre-headless'." >&2
    exit 1
  fi
  version="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
  if [ -z "$version" ] || [ "$version" -lt 17 ]; then
    echo "error: Java $version found, Spark needs 17+. Install it: 'sudo apt-get install openjdk-17-jre-headless'." >&2
    exit 1
  fi
}
check_java

# uv comes from PyPI into a private tools venv, so nothing is installed system-wide.
if [ ! -x "$REPO/.tools/bin/uv" ]; then
  "$PYTHON312" -m venv "$REPO/.tools"
  "$REPO/.tools/bin/pip" install --quiet --disable-pip-version-check "uv==0.13.9"
fi
UV="$REPO/.tools/bin/uv"
# MARIN_EXTRAS=gpu (comma-separated): also the optional extras (gpu: JAX's CUDA plugin; see pyproject.toml).
EXTRAS=() MARIN_EXTRAS="${MARIN_EXTRAS:-}"
for extra in ${MARIN_EXTRAS//,/ }; do EXTRAS+=(--extra "$extra"); done
"$UV" sync --quiet --locked --python "$PYTHON312" --project "$REPO" --all-groups ${EXTRAS[@]+"${EXTRAS[@]}"}

# Bytecode for the installed packages, once per lockfile: uv installs none, and where
# PYTHONDONTWRITEBYTECODE is set no process ever writes any, so every trainer, `dagster` CLI and
# Spark worker process compiled MaxText, JAX, Dagster... from source again (MaxText's import alone:
# 33 s of CPU, 15 s from bytecode). -qq: a few packages ship files that are not Python 3 (tests, templates).
PYC_STAMP="$REPO/.venv/.bytecode-compiled"
LOCK_HASH="$(sha256sum "$REPO/uv.lock" | cut -d' ' -f1)"
# Third-party packages ship invalid escape sequences (lm_eval); their SyntaxWarnings are not the user's to fix.
if [ "$(cat "$PYC_STAMP" 2>/dev/null)" != "$LOCK_HASH" ]; then
  PYTHONWARNINGS=ignore::SyntaxWarning "$REPO/.venv/bin/python" -m compileall -qq -j 0 "$("$REPO/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || true
  echo "$LOCK_HASH" > "$PYC_STAMP"
fi
# The package's own, each time (seconds; up-to-date files are skipped; an edited file's stale .pyc is
# ignored by Python, which checks the source's mtime and size): every subprocess imports it.
"$REPO/.venv/bin/python" -m compileall -qq "$REPO/marin_assets" || true

mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp "$REPO/deployments/local/dagster.yaml" "$DAGSTER_HOME/dagster.yaml"
)

if ! _marin_install; then
  unset -f _marin_install
  echo "error: scripts/env.sh could not set up the environment (see above)" >&2
  return 1 2>/dev/null || exit 1
fi
unset -f _marin_install
export PATH="$REPO/.venv/bin:$PATH"
