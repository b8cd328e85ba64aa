"""`source scripts/env.sh` (as the README tells users) leaves the caller's shell options as they were,
and a failure returns to the shell instead of closing it."""

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHOW = 'echo "rc=$rc"; set -o | grep -E "^(errexit|nounset|pipefail)\\s" | tr -s " \\t" " "; echo alive'


def _source(prelude: str = "") -> str:
    script = f'{prelude}\nsource scripts/env.sh; rc=$?\n{SHOW}'
    return subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, timeout=600).stdout


def test_sourcing_leaves_the_shell_options_alone():
    out = _source()
    assert "rc=0" in out and "alive" in out
    assert "errexit off" in out and "nounset off" in out and "pipefail off" in out, out


def test_a_failure_returns_to_the_shell_that_sourced_it(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "java").write_text('#!/bin/sh\necho \'openjdk version "11.0.2"\' >&2\n')
    (fake / "java").chmod(0o755)
    out = _source(f'export PATH="{fake}:$PATH"')
    assert "rc=1" in out and "alive" in out, out  # an interactive shell would still be open
    assert "errexit off" in out and "pipefail off" in out, out
