"""The README's CLI is the one Dagster recommends: `dg launch` finds the code location from
pyproject.toml's [tool.dg] and materializes a partition; no README command uses the deprecated one."""

import re
from pathlib import Path

import pytest

from marin_assets_tests.e2e.workspace import make_workspace

REPO = Path(__file__).resolve().parents[2]


def test_readme_commands_use_dg_launch():
    readme = (REPO / "README.md").read_text()
    assert "dagster asset materialize" not in readme
    assert re.search(r"^dg launch --assets \S+", readme, re.M)


@pytest.mark.slow
def test_dg_launch_materializes_a_partition(tmp_path):
    ws = make_workspace(tmp_path)
    proc = ws.materialize("raw_corpus", "debian_licenses")
    assert "RUN_SUCCESS" in proc.stdout + proc.stderr
    assert (ws.storage_root / "raw" / "debian_licenses" / "inventory.json").exists()
