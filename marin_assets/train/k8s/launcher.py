"""Submit, watch and clean up one slice workload (Indexed Job or JobSet) with the Kubernetes client.

`SliceClient.run` creates the objects, polls the Job/JobSet and its pods until they finish, and
always deletes what it created: on success, on a pod failure (raising `SliceFailed` with the failing
pods' exit reasons and last log lines), on a timeout, and when the Dagster run is cancelled or
interrupted (DagsterExecutionInterruptedError / KeyboardInterrupt are BaseExceptions, so the
cleanup is an `except BaseException` that re-raises). A multi-host TPU slice cannot make progress
with a host missing, so the first failed pod fails the launch; Dagster's retries start a new one.
A slice whose failed pods were all preempted (the trainer's `TrainingPreempted:` line with the step
it checkpointed, or a pod evicted / marked DisruptionTarget by Kubernetes) raises `SlicePreempted`
with each pod's checkpoint step, which the training launcher turns into a step retry.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import re

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from marin_assets.train.k8s.manifests import JOBSET_GROUP, JOBSET_PLURAL, JOBSET_VERSION, SliceWorkload
from marin_assets.train.maxtext_entry import PREEMPTED_MARKER

# What maxtext_entry logs after a preemption checkpoint: "...after step N; checkpoint N saved..."
_CHECKPOINT_SAVED = re.compile(re.escape(PREEMPTED_MARKER) + r".*?checkpoint (\d+) saved")
_EVICTED = ("Evicted", "Preempting", "Terminated", "DeletionByTaintManager", "TerminationByKubelet")

PENDING, RUNNING, SUCCEEDED, FAILED = "pending", "running", "succeeded", "failed"
# Condition types that end a workload: batch/v1 Job, then jobset.x-k8s.io JobSet.
_DONE = {"Job": ("Complete", "Failed"), "JobSet": ("Completed", "Failed")}


class SliceFailed(RuntimeError):
    """The slice workload failed; the message carries the failing pods' exit reasons and log tails."""


class SlicePreempted(SliceFailed):
    """Every failed pod was preempted; `steps` maps each to the step it checkpointed (None: none)."""

    def __init__(self, message: str, steps: dict[str, int | None]):
        super().__init__(message)
        self.steps = steps


@dataclass(frozen=True)
class SliceState:
    phase: str
    detail: str = ""
    failed_pods: list = field(default_factory=list)   # V1Pod objects


class SliceClient:
    def __init__(self, api_client: k8s.ApiClient, *, poll_interval_s: float = 10.0, log_tail_lines: int = 40,
                 timeout_s: float | None = None, keep_finished: bool = False, log: Callable[[str], None] = print,
                 preemption_drain_s: float = 0.0):
        self.core = k8s.CoreV1Api(api_client)
        self.batch = k8s.BatchV1Api(api_client)
        self.custom = k8s.CustomObjectsApi(api_client)
        self.poll_interval_s = poll_interval_s
        self.log_tail_lines = log_tail_lines
        self.timeout_s = timeout_s
        self.keep_finished = keep_finished
        self.log = log
        # After a preempted pod: how long the other hosts may take to finish their checkpoint and exit
        # (the pods' terminationGracePeriodSeconds) before the slice is judged and deleted.
        self.preemption_drain_s = preemption_drain_s

    def run(self, workload: SliceWorkload) -> SliceState:
        created: list[str] = []
        try:
            self.submit(workload, created)
            state = self.wait(workload)
        except BaseException as exc:  # failure, timeout, Dagster cancel, Ctrl-C: never leave TPUs held
            if created:
                self.log(f"{workload.kind} {workload.name}: {type(exc).__name__}; deleting it")
                self._delete_quietly(workload, created)
            raise
        if not self.keep_finished:
            self.delete(workload, created)
        return state

    def submit(self, w: SliceWorkload, created: list[str] | None = None) -> None:
        """Create the Service (if any), then the workload; `created` collects what may exist now."""
        created = [] if created is None else created
        if w.service is not None:
            _create(created, "service", self.core.create_namespaced_service, w.namespace, w.service)
        if w.kind == "Job":
            _create(created, "workload", self.batch.create_namespaced_job, w.namespace, w.body)
        else:
            _create(created, "workload", self.custom.create_namespaced_custom_object,
                    JOBSET_GROUP, JOBSET_VERSION, w.namespace, JOBSET_PLURAL, w.body)
        self.log(f"submitted {w.kind} {w.namespace}/{w.name} ({w.num_pods} pods)")

    def wait(self, w: SliceWorkload) -> SliceState:
        started, last_phase = time.monotonic(), None
        while True:
            state = self.state(w)
            if state.phase != last_phase:
                self.log(f"{w.kind} {w.name}: {state.phase}{' - ' + state.detail if state.detail else ''}")
                last_phase = state.phase
            if state.phase == SUCCEEDED:
                return state
            if state.phase == FAILED:
                if self.preempted_steps(w, state) is not None:
                    state = self._drained(w, state)
                    steps = self.preempted_steps(w, state)
                    if steps is not None:
                        raise SlicePreempted(self.failure_report(w, state), steps)
                raise SliceFailed(self.failure_report(w, state))
            if self.timeout_s is not None and time.monotonic() - started > self.timeout_s:
                raise TimeoutError(f"{w.kind} {w.name} still {state.phase} after {self.timeout_s:.0f} s: {state.detail}")
            time.sleep(self.poll_interval_s)

    def _drained(self, w: SliceWorkload, state: SliceState) -> SliceState:
        """Wait (up to preemption_drain_s) until no pod runs, so every host's checkpoint step is known."""
        deadline = time.monotonic() + self.preemption_drain_s
        while time.monotonic() < deadline:
            pods = self.core.list_namespaced_pod(w.namespace, label_selector=w.pod_selector).items
            if not any(p.status and p.status.phase in ("Running", "Pending") for p in pods):
                break
            time.sleep(min(self.poll_interval_s, 1.0))
        drained = self.state(w)
        return drained if drained.phase == FAILED else state

    def state(self, w: SliceWorkload) -> SliceState:
        pods = self.core.list_namespaced_pod(w.namespace, label_selector=w.pod_selector).items
        failed = sorted((p for p in pods if p.status and p.status.phase == "Failed"), key=lambda p: p.metadata.name)
        conditions = self._conditions(w)
        done_ok, done_failed = _DONE[w.kind]
        for cond in conditions:
            if cond.get("type") == done_failed and cond.get("status") == "True":
                return SliceState(FAILED, _describe(cond), failed)
        if failed:
            return SliceState(FAILED, f"pod {failed[0].metadata.name} failed", failed)
        for cond in conditions:
            if cond.get("type") == done_ok and cond.get("status") == "True":
                return SliceState(SUCCEEDED, _describe(cond))
        running = sum(1 for p in pods if p.status and p.status.phase in ("Running", "Succeeded"))
        phase = RUNNING if running == w.num_pods else PENDING
        return SliceState(phase, f"{running}/{w.num_pods} pods running")

    def _conditions(self, w: SliceWorkload) -> list[dict]:
        if w.kind == "Job":
            job = self.batch.read_namespaced_job(w.name, w.namespace)
            conds = (job.status.conditions if job.status else None) or []
            return [{"type": c.type, "status": c.status, "reason": c.reason, "message": c.message} for c in conds]
        obj = self.custom.get_namespaced_custom_object(JOBSET_GROUP, JOBSET_VERSION, w.namespace, JOBSET_PLURAL, w.name)
        return (obj.get("status") or {}).get("conditions") or []

    def failure_report(self, w: SliceWorkload, state: SliceState) -> str:
        lines = [f"{w.kind} {w.namespace}/{w.name} failed: {state.detail}"]
        for pod in state.failed_pods[:3]:
            lines.append(f"--- pod {pod.metadata.name}: {_exit_reason(pod)}; last {self.log_tail_lines} log lines:")
            lines.append(self._log_tail(w.namespace, pod.metadata.name))
        if not state.failed_pods:
            lines.append("(no failed pod found: the controller ended the workload; see `kubectl describe`)")
        return "\n".join(lines)

    def preempted_steps(self, w: SliceWorkload, state: SliceState) -> dict[str, int | None] | None:
        """Each failed pod's preemption checkpoint step, or None when any failed pod was not preempted."""
        if not state.failed_pods:
            return None
        steps: dict[str, int | None] = {}
        for pod in state.failed_pods:
            saved = _CHECKPOINT_SAVED.findall(self._log_tail(w.namespace, pod.metadata.name))
            if saved:
                steps[pod.metadata.name] = int(saved[-1])
            elif _evicted(pod):
                steps[pod.metadata.name] = None
            else:
                return None
        return steps

    def _log_tail(self, namespace: str, pod: str) -> str:
        try:
            text = self.core.read_namespaced_pod_log(pod, namespace, tail_lines=self.log_tail_lines)
        except ApiException as exc:
            return f"(logs unavailable: {exc.status} {exc.reason})"
        return text.rstrip() or "(empty log)"

    def delete(self, w: SliceWorkload, parts=("workload", "service")) -> None:
        """Delete the workload (its pods go with it) and its Service; already gone is fine.

        Only what this launch created is deleted: a name clash must not delete another launch's Job.
        """
        options = k8s.V1DeleteOptions(propagation_policy="Background")
        if "workload" in parts and w.kind == "Job":
            _ignore_missing(self.batch.delete_namespaced_job, w.name, w.namespace, body=options)
        elif "workload" in parts:
            _ignore_missing(self.custom.delete_namespaced_custom_object, JOBSET_GROUP, JOBSET_VERSION,
                            w.namespace, JOBSET_PLURAL, w.name, body=options)
        if "service" in parts and w.service is not None:
            _ignore_missing(self.core.delete_namespaced_service, w.name, w.namespace)
        self.log(f"deleted {', '.join(parts)} of {w.kind} {w.namespace}/{w.name}")

    def _delete_quietly(self, w: SliceWorkload, parts) -> None:
        try:
            self.delete(w, parts)
        except Exception as exc:  # keep the original error; say what may be left behind
            self.log(f"could not delete {w.kind} {w.namespace}/{w.name} ({exc}); delete it by hand")


def _create(created: list[str], part: str, call, *args) -> None:
    """Count `part` as created before the request goes out: an interrupt can land after the server made
    the object but before its reply arrives, and cleanup must still delete it. Only an answer from the
    server (409 name clash, 403, 422) proves nothing was made, so only then is the part dropped."""
    created.append(part)
    try:
        call(*args)
    except ApiException:
        created.remove(part)
        raise


def _ignore_missing(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _describe(cond: dict) -> str:
    return ": ".join(str(x) for x in (cond.get("reason"), cond.get("message")) if x)


def _evicted(pod) -> bool:
    """Kubernetes took the pod away (eviction, node drain, spot reclaim): not the trainer's own failure."""
    status = pod.status
    if status is None:
        return False
    if status.reason in _EVICTED:
        return True
    return any(c.type == "DisruptionTarget" and c.status == "True" for c in status.conditions or [])


def _exit_reason(pod) -> str:
    for status in (pod.status.container_statuses or []) if pod.status else []:
        term = status.state.terminated if status.state else None
        if term is not None:
            return f"container {status.name} exited {term.exit_code} ({term.reason or 'no reason'})"
    return f"phase {pod.status.phase if pod.status else 'unknown'}"
