"""A small real Kubernetes API server for tests (HTTP on 127.0.0.1), with a toy kubelet.

It serves the endpoints the slice launcher calls: Services, batch/v1 Jobs, jobset.x-k8s.io/v1alpha2
JobSets (create/get/delete), pod lists by label selector and pod logs. Creating a Job or JobSet
"schedules" its pods the way the controllers name them, resolves each container's env like the
kubelet (fieldRef annotations, $(VAR) expansion, JOB_COMPLETION_INDEX) and runs the container
command as a local process; pod phase, exit code and logs come from that process. Like the Job
controller with backoffLimit 0, a failed pod fails its Job and stops its siblings. Deleting the
workload kills its processes. `requests` records every call for assertions.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

REPO = Path(__file__).resolve().parents[2]
NODE_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "STORAGE_EMULATOR_HOST", "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT")
_ANNOTATION_REF = re.compile(r"^metadata\.annotations\['([^']+)'\]$")
_VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


class Invalid(Exception):
    pass


@dataclass
class Pod:
    name: str
    namespace: str
    labels: dict
    annotations: dict
    spec: dict
    owner: str                       # Job name
    log_path: str
    proc: subprocess.Popen | None = None
    env: dict = field(default_factory=dict)
    killed: bool = False

    def phase(self) -> str:
        if self.proc is None:
            return "Pending"
        code = self.proc.poll()
        return "Running" if code is None else ("Succeeded" if code == 0 else "Failed")

    def to_json(self) -> dict:
        container = self.spec["containers"][0]
        code = self.proc.poll() if self.proc else None
        state = {"waiting": {"reason": "ContainerCreating"}} if self.proc is None else (
            {"running": {}} if code is None else
            {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}})
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": self.labels,
                         "annotations": self.annotations},
            "spec": self.spec,
            "status": {"phase": self.phase(), "containerStatuses": [{
                "name": container["name"], "image": container["image"], "imageID": "", "ready": code is None,
                "restartCount": 0, "state": state}]},
        }


class StubKube:
    def __init__(self, run_pods: bool = True, create_reply_delay_s: float = 0.0):
        self.run_pods = run_pods         # False: pods stay Pending (no capacity)
        # A slow API server: the object and its pods exist before the client hears back.
        self.create_reply_delay_s = create_reply_delay_s
        self.objects: dict[tuple[str, str, str], dict] = {}   # (kind, namespace, name) -> object
        self.pods: dict[str, Pod] = {}
        self.created_pods: list[Pod] = []       # every pod ever scheduled, deleted ones too
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.RLock()
        self.logs_dir = tempfile.mkdtemp(prefix="stub-kube-")
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StubKube:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        for pod in list(self.pods.values()):
            _stop(pod)

    # -- the API ------------------------------------------------------------------------------
    def create(self, kind: str, namespace: str, body: dict) -> dict:
        name = (body.get("metadata") or {}).get("name")
        if not name:
            raise Invalid("metadata.name is required")
        with self.lock:
            if (kind, namespace, name) in self.objects:
                raise FileExistsError(name)
            obj = {**body, "metadata": {**body["metadata"], "namespace": namespace, "uid": str(uuid.uuid4()),
                                        "creationTimestamp": _now()}}
            jobs = self._jobs_of(kind, obj)
            pods = [pod for job_name, job_spec, extra in jobs for pod in self._pods_of(namespace, job_name, job_spec, extra)]
            self.objects[(kind, namespace, name)] = obj
            for pod in pods:
                self.pods[pod.name] = pod
                self.created_pods.append(pod)
                if self.run_pods:
                    _start(pod)
        return obj

    def get(self, kind: str, namespace: str, name: str) -> dict:
        with self.lock:
            obj = self.objects[(kind, namespace, name)]
            if kind == "Job":
                return {**obj, "status": self._job_status(name, obj["spec"])}
            if kind == "JobSet":
                return {**obj, "status": self._jobset_status(obj)}
            return obj

    def delete(self, kind: str, namespace: str, name: str) -> dict:
        with self.lock:
            obj = self.objects.pop((kind, namespace, name))
            owned = [p for p in self.pods.values() if p.labels.get("stub/owner") == f"{kind}/{name}"]
            for pod in owned:
                _stop(pod)
                del self.pods[pod.name]
        return obj

    def list_pods(self, namespace: str, selector: str) -> list[dict]:
        wanted = dict(part.split("=", 1) for part in selector.split(",") if part)
        with self.lock:
            return [p.to_json() for p in self.pods.values()
                    if p.namespace == namespace and all(p.labels.get(k) == v for k, v in wanted.items())]

    def pod_log(self, name: str, tail: int | None) -> str:
        lines = Path(self.pods[name].log_path).read_text().splitlines()
        return "\n".join(lines[-tail:] if tail else lines) + "\n"

    # -- controllers --------------------------------------------------------------------------
    def _jobs_of(self, kind: str, obj: dict) -> list[tuple[str, dict, dict]]:
        name = obj["metadata"]["name"]
        if kind == "Job":
            return [(name, obj["spec"], {"stub/owner": f"Job/{name}"})]
        if kind != "JobSet":
            return []
        jobs = []
        for rjob in obj["spec"]["replicatedJobs"]:
            for j in range(rjob.get("replicas", 1)):
                jobs.append((f"{name}-{rjob['name']}-{j}", rjob["template"]["spec"], {
                    "stub/owner": f"JobSet/{name}", "jobset.sigs.k8s.io/jobset-name": name,
                    "jobset.sigs.k8s.io/replicatedjob-name": rjob["name"], "jobset.sigs.k8s.io/job-index": str(j)}))
        return jobs

    def _pods_of(self, namespace: str, job_name: str, job_spec: dict, extra: dict) -> list[Pod]:
        if job_spec.get("completionMode") != "Indexed":
            raise Invalid("the stub only runs Indexed Jobs")
        template = job_spec["template"]
        pods = []
        for index in range(job_spec["completions"]):
            annotations = {**(template.get("metadata") or {}).get("annotations", {}), **extra,
                           "batch.kubernetes.io/job-completion-index": str(index)}
            labels = {**(template.get("metadata") or {}).get("labels", {}), "stub/owner": extra["stub/owner"],
                      "job-name": job_name}
            name = f"{job_name}-{index}-{uuid.uuid4().hex[:5]}"
            pod = Pod(name, namespace, labels, annotations, template["spec"], job_name,
                      os.path.join(self.logs_dir, f"{name}.log"))
            pod.env = _container_env(template["spec"]["containers"][0], pod, index)
            pods.append(pod)
        return pods

    def _job_status(self, job_name: str, spec: dict) -> dict:
        pods = [p for p in self.pods.values() if p.owner == job_name]
        phases = [p.phase() for p in pods]
        status = {"active": phases.count("Running") + phases.count("Pending"),
                  "succeeded": phases.count("Succeeded"), "failed": phases.count("Failed")}
        if status["failed"] > spec.get("backoffLimit", 6):
            for pod in pods:      # the Job controller terminates the remaining pods
                _stop(pod)
            status["conditions"] = [_condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
        elif status["succeeded"] == spec["completions"]:
            status["conditions"] = [_condition("Complete", None, None)]
        return status

    def _jobset_status(self, obj: dict) -> dict:
        statuses = [self._job_status(name, spec) for name, spec, _ in self._jobs_of("JobSet", obj)]
        kinds = [c["type"] for s in statuses for c in s.get("conditions", [])]
        if "Failed" in kinds:
            return {"conditions": [_condition("Failed", "FailedJobs", "jobset failed due to one or more job failures")]}
        if kinds.count("Complete") == len(statuses):
            return {"conditions": [_condition("Completed", "AllJobsCompleted", "jobset completed successfully")]}
        return {}


def _container_env(container: dict, pod: Pod, index: int) -> dict:
    env = {"JOB_COMPLETION_INDEX": str(index)}
    for var in container.get("env") or []:
        if "value" in var:
            env[var["name"]] = _VAR_REF.sub(lambda m: env.get(m.group(1), m.group(0)), var["value"])
            continue
        path = var["valueFrom"]["fieldRef"]["fieldPath"]
        match = _ANNOTATION_REF.match(path)
        if path == "metadata.name":
            env[var["name"]] = pod.name
        elif match and match.group(1) in pod.annotations:
            env[var["name"]] = pod.annotations[match.group(1)]
        else:
            raise Invalid(f"env {var['name']}: unsupported fieldRef {path!r}")
    return env


def _start(pod: Pod) -> None:
    container = pod.spec["containers"][0]
    env = {k: os.environ[k] for k in NODE_ENV if k in os.environ}
    env["PYTHONPATH"] = str(REPO)
    log = open(pod.log_path, "w")
    pod.proc = subprocess.Popen([*container["command"], *(container.get("args") or [])], env={**env, **pod.env},
                                stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    log.close()


def _stop(pod: Pod) -> None:
    if pod.proc is not None and pod.proc.poll() is None:
        pod.killed = True
        pod.proc.terminate()
        try:
            pod.proc.wait(5)
        except subprocess.TimeoutExpired:
            pod.proc.kill()
            pod.proc.wait()


def _condition(kind: str, reason: str | None, message: str | None) -> dict:
    cond = {"type": kind, "status": "True", "lastTransitionTime": _now()}
    return {**cond, **({"reason": reason} if reason else {}), **({"message": message} if message else {})}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


_ROUTES = [  # (method, regex, kind, action)
    ("POST", r"/api/v1/namespaces/(?P<ns>[^/]+)/services", "Service", "create"),
    ("DELETE", r"/api/v1/namespaces/(?P<ns>[^/]+)/services/(?P<name>[^/]+)", "Service", "delete"),
    ("POST", r"/apis/batch/v1/namespaces/(?P<ns>[^/]+)/jobs", "Job", "create"),
    ("GET", r"/apis/batch/v1/namespaces/(?P<ns>[^/]+)/jobs/(?P<name>[^/]+)", "Job", "get"),
    ("DELETE", r"/apis/batch/v1/namespaces/(?P<ns>[^/]+)/jobs/(?P<name>[^/]+)", "Job", "delete"),
    ("POST", r"/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/(?P<ns>[^/]+)/jobsets", "JobSet", "create"),
    ("GET", r"/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/(?P<ns>[^/]+)/jobsets/(?P<name>[^/]+)", "JobSet", "get"),
    ("DELETE", r"/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/(?P<ns>[^/]+)/jobsets/(?P<name>[^/]+)", "JobSet", "delete"),
    ("GET", r"/api/v1/namespaces/(?P<ns>[^/]+)/pods", "Pod", "list"),
    ("GET", r"/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)/log", "Pod", "log"),
]


def _handler(kube: StubKube):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _serve(self, method: str) -> None:
            url = urlparse(self.path)
            query = parse_qs(url.query)
            kube.requests.append((method, url.path))
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null") if length else None
            for verb, regex, kind, action in _ROUTES:
                match = re.fullmatch(regex, url.path)
                if verb == method and match:
                    break
            else:
                return self._send(404, _status(404, "NotFound", f"no route {method} {url.path}"))
            ns, name = match.group("ns"), match.groupdict().get("name")
            try:
                if action == "create":
                    created = kube.create(kind, ns, body)
                    time.sleep(kube.create_reply_delay_s)
                    return self._send(201, created)
                if action == "get":
                    return self._send(200, kube.get(kind, ns, name))
                if action == "delete":
                    kube.delete(kind, ns, name)
                    return self._send(200, _status(200, None, "deleted"))
                if action == "list":
                    items = kube.list_pods(ns, query.get("labelSelector", [""])[0])
                    return self._send(200, {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items})
                tail = int(query["tailLines"][0]) if "tailLines" in query else None
                return self._send(200, kube.pod_log(name, tail), content_type="text/plain")
            except KeyError:
                return self._send(404, _status(404, "NotFound", f"{kind} {name!r} not found"))
            except FileExistsError:
                return self._send(409, _status(409, "AlreadyExists", f"{kind} already exists"))
            except Invalid as exc:
                return self._send(422, _status(422, "Invalid", str(exc)))

        def _send(self, code: int, payload, content_type: str = "application/json") -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._serve("GET")

        def do_POST(self):
            self._serve("POST")

        def do_DELETE(self):
            self._serve("DELETE")

    return Handler


def _status(code: int, reason: str | None, message: str) -> dict:
    return {"apiVersion": "v1", "kind": "Status", "status": "Success" if code < 400 else "Failure",
            "code": code, "reason": reason, "message": message}
