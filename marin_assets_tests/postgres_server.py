"""A real, throwaway PostgreSQL server for tests (Debian's `postgresql` package binaries).

    from marin_assets_tests.postgres_server import postgres  # noqa: F401  (the fixture)

    def test_x(postgres):
        postgres.env()   # DAGSTER_PG_* variables, as deployments/production/dagster.yaml reads them

initdb creates a cluster in a temp folder; the server listens on a free 127.0.0.1 port with its
socket in that folder, fsync off. PostgreSQL refuses to run as root, so under root (CI) every
server command runs as the `postgres` user (runuser) and the folder is handed to that user.
Outside CI the fixture skips when the binaries are missing; in CI (env CI set) it fails instead.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

SERVER_USER = "postgres"
DB_NAME = "dagster"
INSTALL_HINT = "apt-get install -y postgresql"


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    db_name: str

    def env(self) -> dict[str, str]:
        return {"DAGSTER_PG_HOST": self.host, "DAGSTER_PG_PORT": str(self.port), "DAGSTER_PG_DB": self.db_name,
                "DAGSTER_PG_USER": self.user, "DAGSTER_PG_PASSWORD": self.password}


def find_bin_dir() -> str | None:
    """Newest /usr/lib/postgresql/<version>/bin with pg_ctl and initdb (Debian layout), else PATH."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if candidates:
        return os.path.dirname(candidates[-1])
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(os.path.realpath(pg_ctl)) if pg_ctl and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def run_postgres(bin_dir: str) -> Iterator[PostgresServer]:
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", SERVER_USER, "--"] if as_root else []
    base = tempfile.mkdtemp(prefix="marin-pg-")
    data, log = os.path.join(base, "data"), os.path.join(base, "server.log")
    if as_root:
        user = pwd.getpwnam(SERVER_USER)
        os.chown(base, user.pw_uid, user.pw_gid)
    port = _free_port()

    def run(*cmd: str) -> None:
        done = subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=120, cwd=base)
        if done.returncode:
            server_log = open(log).read()[-2000:] if os.path.exists(log) else ""
            raise RuntimeError(f"{cmd[0]} failed ({done.returncode}): {done.stderr or done.stdout}\n{server_log}")

    try:
        run(f"{bin_dir}/initdb", "-D", data, "-A", "trust", "-U", SERVER_USER, "-E", "UTF8", "--no-sync")
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        run(f"{bin_dir}/pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "-o", options, "start")
        try:
            run(f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", SERVER_USER, DB_NAME)
            # trust auth: the password is accepted but unused, as a managed database's would be checked
            yield PostgresServer("127.0.0.1", port, SERVER_USER, "unused-with-trust-auth", DB_NAME)
        finally:
            run(f"{bin_dir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    bin_dir = find_bin_dir()
    if bin_dir is None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL server binaries (pg_ctl, initdb) are missing in CI; .ci/run must `{INSTALL_HINT}`")
        pytest.skip(f"PostgreSQL server binaries (pg_ctl, initdb) not found; `{INSTALL_HINT}` to run this test")
    with run_postgres(bin_dir) as server:
        yield server
