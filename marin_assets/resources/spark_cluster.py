"""A Spark standalone cluster on this machine: one master + N workers, each its own JVM process.

Started from the launcher classes inside the pyspark package (bin/spark-class ... deploy.master.Master
/ deploy.worker.Worker), bound to 127.0.0.1, so a job submitted to spark://127.0.0.1:<port> runs in
executor JVMs (and their Python workers) that share nothing with the driver but the file system.
Used by scripts/spark_cluster.sh (start|stop|status) and by the tests' cluster fixture.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
DEFAULT_PORT = 7077
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
STATE_FILE = "cluster.json"


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((HOST, port)) == 0


@dataclass
class StandaloneCluster:
    state_dir: Path
    port: int = DEFAULT_PORT
    webui_port: int = 0  # 0: a free port, picked at start
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "1g"
    pids: list[int] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP=HOST, PYSPARK_PYTHON=sys.executable,
                   SPARK_LOG_DIR=str(self.state_dir), SPARK_CONF_DIR=str(self.state_dir / "conf"),
                   # no REST submission server: it would take port 6066 for every cluster on the machine
                   SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")  # fmt: skip
        return env

    def _launch(self, name: str, *args: str) -> int:
        log = open(self.state_dir / f"{name}.log", "wb")  # noqa: SIM115 - the child keeps it open
        # spark-class execs java: the pid is the JVM's, in its own session so a Ctrl-C here spares it
        proc = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], env=self._env(),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        self.pids.append(proc.pid)
        return proc.pid

    def start(self, timeout: float = 120) -> StandaloneCluster:
        if port_in_use(self.port):
            raise RuntimeError(f"port {self.port} is in use: another Spark master? pick another with --port")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        (self.state_dir / "conf").mkdir(exist_ok=True)
        self.webui_port = self.webui_port or free_port()
        self._launch("master", MASTER_CLASS, "--host", HOST, "--port", str(self.port),
                     "--webui-port", str(self.webui_port))  # fmt: skip
        self._wait(lambda: port_in_use(self.port) and self.status() is not None, timeout, "the master to listen")
        for i in range(self.workers):
            self._launch(f"worker-{i}", WORKER_CLASS, "--host", HOST, "--cores", str(self.worker_cores),
                         "--memory", self.worker_memory, "--work-dir", str(self.state_dir / f"work-{i}"),
                         "--webui-port", "0", self.master_url)  # fmt: skip
        self._wait(lambda: (self.status() or {}).get("aliveworkers") == self.workers, timeout,
                   f"{self.workers} workers to register")  # fmt: skip
        (self.state_dir / STATE_FILE).write_text(json.dumps(asdict(self), default=str))
        return self

    def status(self) -> dict | None:
        """The master's JSON status (workers, apps), or None when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.webui_port}/json/", timeout=2) as response:
                return json.load(response)
        except OSError:
            return None

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline or not all(_alive(p) for p in self.pids):
                self.stop()
                raise RuntimeError(f"timed out waiting for {what}; logs in {self.state_dir}")
            time.sleep(0.5)

    def stop(self, timeout: float = 30) -> None:
        """Stop the processes this cluster started (workers first), by pid."""
        for pid in reversed(self.pids):
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for pid in self.pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.pids = []
        (self.state_dir / STATE_FILE).unlink(missing_ok=True)

    @classmethod
    def load(cls, state_dir: Path) -> StandaloneCluster | None:
        path = state_dir / STATE_FILE
        if not path.exists():
            return None
        fields = json.loads(path.read_text())
        return cls(**{**fields, "state_dir": Path(fields["state_dir"])})


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)  # reap our own child if it exited
        if waited == pid:
            return False
    except ChildProcessError:
        pass  # not our child (started by an earlier `start`): fall through to kill(0)
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument("--state-dir", type=Path, default=Path(".marin/spark_cluster"))
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-cores", type=int, default=1)
    parser.add_argument("--worker-memory", default="1g")
    args = parser.parse_args(argv)
    running = StandaloneCluster.load(args.state_dir)
    if args.command == "start":
        if running is not None and running.status() is not None:
            print(f"already running: {running.master_url} (state in {args.state_dir})")
            return 0
        cluster = StandaloneCluster(args.state_dir, args.port, workers=args.workers,
                                    worker_cores=args.worker_cores, worker_memory=args.worker_memory).start()  # fmt: skip
        print(f"started {cluster.master_url} with {cluster.workers} workers; UI http://{HOST}:{cluster.webui_port}")
        print(f"export MARIN_SPARK_MASTER={cluster.master_url}")
    elif args.command == "stop":
        if running is None:
            print("not running")
            return 0
        running.stop()
        print(f"stopped {running.master_url}")
    else:
        status = running.status() if running else None
        print(json.dumps({k: status[k] for k in ("url", "status", "aliveworkers", "cores")}) if status else "not running")
        return 0 if status else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
