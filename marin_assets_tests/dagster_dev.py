"""Start `dagster dev` for a test in its own process group, wait until it serves, always stop it.

    with dagster_dev(home, module="marin_assets.definitions", attribute="defs", host="127.0.0.1") as server:
        requests.get(f"{server.url}/server_info")

`home` becomes DAGSTER_HOME (the local deployment's dagster.yaml is copied in: no telemetry, no nux
modal). The server's output goes to <home>/dagster-dev.log, quoted in the error if it never comes up;
unbuffered, so the log read at a failure holds every line its processes wrote until then.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCAL_INSTANCE_YAML = REPO_ROOT / "deployments" / "local" / "dagster.yaml"
# Dagster's 60 s default for a code-server call: exceeded (run launch failed) beside a second pytest worker
# on a loaded machine; a hang guard, like the other waits here.
GRPC_TIMEOUT_S = os.environ.get("DAGSTER_GRPC_TIMEOUT_SECONDS", "300")


@dataclass(frozen=True)
class DevServer:
    url: str
    port: int
    pid: int
    home: Path
    log: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serving(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the whole group (webserver, daemon, code servers, run workers), SIGKILL if it lingers."""
    for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            time.sleep(0.5)  # let the group's children exit after the leader
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def dagster_dev(
    home: Path,
    *,
    module: str,
    attribute: str | None = None,
    host: str | None = "127.0.0.1",
    env: dict[str, str] | None = None,
    timeout_s: float = 300,
) -> Iterator[DevServer]:
    """host=None starts it without -h, to test Dagster's own default."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(LOCAL_INSTANCE_YAML, home / "dagster.yaml")
    port = free_port()
    command = [sys.executable, "-m", "dagster", "dev", "-m", module, "-p", str(port)]
    command += ["-a", attribute] if attribute else []
    command += ["-h", host] if host else []
    log_path = home / "dagster-dev.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, cwd=REPO_ROOT, env={**os.environ, "DAGSTER_GRPC_TIMEOUT_SECONDS": GRPC_TIMEOUT_S, **(env or {}),
                                         "DAGSTER_HOME": str(home), "PYTHONUNBUFFERED": "1"},
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while not _serving(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-4000:]
                raise RuntimeError(f"dagster dev did not serve {url} within {timeout_s:.0f} s "
                                   f"(exit code {proc.poll()}); log tail:\n{tail}")
            time.sleep(0.25)  # start-up is seconds: poll often, each poll is one local HTTP request
        yield DevServer(url=url, port=port, pid=proc.pid, home=home, log=log_path)
    finally:
        _stop(proc)
