"""The webserver listens on loopback only, even when nobody passes -h."""

import psutil
import pytest

from marin_assets_tests.dagster_dev import REPO_ROOT, dagster_dev

pytestmark = pytest.mark.slow


def listening_addresses(port: int) -> set[str]:
    return {c.laddr.ip for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port}


def test_dagster_dev_without_host_binds_loopback_only(tmp_path):
    with dagster_dev(tmp_path / "home", module="marin_assets_tests.security.tiny_location", host=None) as server:
        assert listening_addresses(server.port) == {"127.0.0.1"}
    assert listening_addresses(server.port) == set()  # and the whole process group is gone


def _command_lines(path):
    """A script's lines, or the lines inside a Markdown file's code fences (prose may name the command)."""
    lines = path.read_text().splitlines()
    if path.suffix != ".md":
        return lines
    fenced, inside = [], False
    for line in lines:
        if line.startswith("```"):
            inside = not inside
        elif inside:
            fenced.append(line)
    return fenced


def test_docs_and_scripts_always_pass_the_loopback_host():
    starts = 0
    for path in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")), *sorted((REPO_ROOT / "scripts").glob("*.sh"))]:
        for line in _command_lines(path):
            if "dagster dev" in line or "dagster-webserver" in line:
                assert "-h 127.0.0.1" in line or "--host 127.0.0.1" in line, f"{path.name}: {line.strip()}"
                starts += 1
    assert starts >= 1  # the README shows how to open the UI
