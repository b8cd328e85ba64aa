"""A Dataproc JobController for tests: the real gRPC service (SubmitJob, GetJob, CancelJob) on
127.0.0.1, for one cluster, that runs each submitted PySpark job with spark-submit on this machine.

    with StubDataproc("marin-prod", "us-east5", "marin-clean", tmp_path) as dataproc:
        client = JobControllerClient(transport=JobControllerGrpcTransport(
            channel=grpc.insecure_channel(dataproc.endpoint)))

Requests and replies are the API's own messages (google.cloud.dataproc_v1 types, serialized to
protobuf on the wire). Like Dataproc, the stub assigns the job id (= the job uuid) when the request
names none, copies the main file into a job folder, passes the job's properties as --conf (the
deploy mode becomes client: the "cluster" is local[2]), records the driver's output and reports
PENDING, RUNNING, then DONE or ERROR with "Job failed with message [<driver's error>]".
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import uuid
from concurrent import futures
from pathlib import Path

import fsspec
import grpc
import pyspark
from google.cloud.dataproc_v1.types import jobs
from google.protobuf import timestamp_pb2

SERVICE = "google.cloud.dataproc.v1.JobController"
PYTHON_FILE_TYPES = (".py", ".egg", ".zip")  # what python_file_uris accepts (the API reference)
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Skew|Failed)\b.*")
State = jobs.JobStatus.State


class StubDataproc:
    def __init__(self, project_id: str, region: str, cluster_name: str, workdir: Path, master: str = "local[2]"):
        self.project_id, self.region, self.cluster_name = project_id, region, cluster_name
        self.workdir, self.master = Path(workdir), master
        self.jobs: dict[str, jobs.Job] = {}
        self.requests: list[tuple[str, object]] = []
        self._procs: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._server = None
        self.endpoint = ""

    def __enter__(self) -> StubDataproc:
        def unary(handler, request_type, reply_type=jobs.Job):
            return grpc.unary_unary_rpc_method_handler(handler, request_deserializer=request_type.deserialize,
                                                       response_serializer=reply_type.serialize)  # fmt: skip

        handlers = {"SubmitJob": unary(self._submit, jobs.SubmitJobRequest),
                    "GetJob": unary(self._get, jobs.GetJobRequest),
                    "CancelJob": unary(self._cancel, jobs.CancelJobRequest)}  # fmt: skip
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        self.endpoint = f"127.0.0.1:{port}"
        return self

    def __exit__(self, *exc) -> None:
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._server.stop(grace=None)

    # --- the service -------------------------------------------------------------------------
    def _check_place(self, project_id: str, region: str, context) -> None:
        if (project_id, region) != (self.project_id, self.region):
            context.abort(grpc.StatusCode.NOT_FOUND, f"no cluster in projects/{project_id}/regions/{region}")

    def _submit(self, request: jobs.SubmitJobRequest, context) -> jobs.Job:
        self.requests.append(("SubmitJob", request))
        self._check_place(request.project_id, request.region, context)
        job = jobs.Job(request.job)
        if job.placement.cluster_name != self.cluster_name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"cluster {job.placement.cluster_name!r} does not exist")
        pyspark_job = job.pyspark_job
        if not pyspark_job.main_python_file_uri.endswith(".py"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "main_python_file_uri must be a .py file")
        bad = [u for u in pyspark_job.python_file_uris if not u.endswith(PYTHON_FILE_TYPES)]
        if bad:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"python_file_uris: unsupported file types {bad}")
        job.job_uuid = str(uuid.uuid4())
        job.reference = jobs.JobReference(project_id=request.project_id,
                                          job_id=job.reference.job_id or job.job_uuid)  # fmt: skip
        job_id = job.reference.job_id
        if job_id in self.jobs:
            context.abort(grpc.StatusCode.ALREADY_EXISTS, f"job {job_id} exists")
        folder = self.workdir / job_id
        folder.mkdir(parents=True)
        job.driver_output_resource_uri = f"file://{folder / 'driveroutput'}"
        self._set(job, State.PENDING)
        self.jobs[job_id] = job
        threading.Thread(target=self._run, args=(job_id, folder), daemon=True).start()
        return job

    def _get(self, request: jobs.GetJobRequest, context) -> jobs.Job:
        self.requests.append(("GetJob", request))
        self._check_place(request.project_id, request.region, context)
        with self._lock:
            if request.job_id not in self.jobs:
                context.abort(grpc.StatusCode.NOT_FOUND, f"job {request.job_id} not found")
            return jobs.Job(self.jobs[request.job_id])

    def _cancel(self, request: jobs.CancelJobRequest, context) -> jobs.Job:
        self.requests.append(("CancelJob", request))
        with self._lock:
            job = self.jobs.get(request.job_id)
            if job is None:
                context.abort(grpc.StatusCode.NOT_FOUND, f"job {request.job_id} not found")
            proc = self._procs.get(request.job_id)
            if proc is not None and proc.poll() is None:
                proc.kill()
            self._set(job, State.CANCELLED, "Job cancelled by the user")
            return jobs.Job(job)

    # --- running a job -----------------------------------------------------------------------
    def _command(self, job: jobs.Job, folder: Path) -> list[str]:
        pyspark_job = job.pyspark_job
        main = folder / Path(pyspark_job.main_python_file_uri).name
        with fsspec.open(pyspark_job.main_python_file_uri, "rb") as src, open(main, "wb") as dst:
            shutil.copyfileobj(src, dst)  # Dataproc stages the main file; it never runs in place
        command = [str(Path(pyspark.__file__).parent / "bin" / "spark-submit"), "--master", self.master,
                   "--deploy-mode", "client", "--name", job.reference.job_id]  # fmt: skip
        for key, value in sorted(pyspark_job.properties.items()):
            if key != "spark.submit.deployMode":
                command += ["--conf", f"{key}={value}"]
        if pyspark_job.python_file_uris:
            command += ["--py-files", ",".join(pyspark_job.python_file_uris)]
        return [*command, str(main), *pyspark_job.args]

    def _run(self, job_id: str, folder: Path) -> None:
        job = self.jobs[job_id]
        output = folder / "driveroutput"
        try:
            command = self._command(job, folder)
        except OSError as exc:
            with self._lock:
                self._set(job, State.ERROR, f"Job failed with message [{exc}]")
            return
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        with open(output, "wb") as out:
            proc = subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
            with self._lock:
                self._procs[job_id] = proc
                self._set(job, State.RUNNING)
            rc = proc.wait()
        with self._lock:
            if job.status.state == State.CANCELLED:
                return
            if rc == 0:
                self._set(job, State.DONE)
            else:
                message = driver_error(output.read_text(errors="replace")) or f"driver exited with code {rc}"
                self._set(job, State.ERROR, f"Job failed with message [{message}]. Additional details can be "
                                            f"found at:\n{job.driver_output_resource_uri}")  # fmt: skip

    @staticmethod
    def _set(job: jobs.Job, state, details: str = "") -> None:
        now = timestamp_pb2.Timestamp()
        now.GetCurrentTime()
        if job.status.state != State.STATE_UNSPECIFIED:
            job.status_history.append(jobs.JobStatus(job.status))
        job.status = jobs.JobStatus(state=state, details=details, state_start_time=now)
        job.done = state in (State.DONE, State.ERROR, State.CANCELLED)


def driver_error(output: str) -> str:
    """The driver's exception: the last 'SomeError: message' line of its output."""
    lines = [line for line in output.splitlines() if _ERROR_LINE.match(line)]
    return lines[-1] if lines else ""
