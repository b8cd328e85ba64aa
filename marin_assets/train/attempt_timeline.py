"""Where one training attempt's wall time went, stamped by the trainer from MaxText's own log lines.

Each attempt (a first launch, or a resume after preemption) appends one JSON line to the run
folder's `logs/attempts/` when it ends (one file each): its wall time, each completed step's time, the time
to the first step, restoring a checkpoint and evaluating, when MaxText returned, and the peak device
memory the trainer measured. `efficiency.py` turns the attempts of a run into goodput and badput.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field

from marin_assets.train.metrics import EvalMetric, StepMetric

ATTEMPTS_DIR = "logs/attempts"
RESTORE_START = re.compile(r"restoring from this run's directory step (?P<step>\d+)")
EVAL_START = re.compile(r"Starting eval after train step")


@dataclass
class Attempt:
    started_at: float                       # unix time the trainer process started
    wall_s: float = 0.0                     # trainer start to the attempt's end
    restored_step: int | None = None
    restore_s: float = 0.0                  # from the restore line to the next MaxText line
    first_step_at_s: float | None = None    # seconds after start: imports, init, restore, compile, step 0
    maxtext_end_s: float | None = None      # seconds after start when MaxText returned (final save included)
    step_seconds: dict[int, float] = field(default_factory=dict)  # MaxText's own step times
    eval_s: float = 0.0                     # evaluations that started after the first step line
    outcome: str = "running"                # finished | preempted | failed
    peak_memory_bytes: float | None = None
    peak_memory_source: str | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        out["step_seconds"] = {str(k): v for k, v in self.step_seconds.items()}
        return out

    @classmethod
    def from_json(cls, data: dict) -> Attempt:
        data = dict(data)
        data["step_seconds"] = {int(k): v for k, v in data.get("step_seconds", {}).items()}
        return cls(**data)


class AttemptClock:
    """Fed every log message of the trainer (after parse_line); keeps the attempt's timeline.

    MaxText prints a step's line once the next step is dispatched, so lines are not exact event
    times; only intervals between markers are used: start -> restore -> first step line -> MaxText's end,
    and each evaluation's start and end lines.
    """

    def __init__(self, clock=time.monotonic, wall_clock=time.time):
        self.clock = clock
        self.start = clock()
        self.attempt = Attempt(started_at=wall_clock())
        self._restore_from: float | None = None
        self._eval_from: float | None = None

    def observe(self, message: str, parsed) -> None:
        now = self.clock()
        if self._restore_from is not None:  # the first line after the restore line ends it
            self.attempt.restore_s += now - self._restore_from
            self._restore_from = None
        if m := RESTORE_START.search(message):
            self.attempt.restored_step = int(m["step"])
            self._restore_from = now
        elif EVAL_START.search(message) and self.attempt.first_step_at_s is not None:
            self._eval_from = now  # an eval before the first step line is part of start-up
        elif isinstance(parsed, EvalMetric) and self._eval_from is not None:
            self.attempt.eval_s += now - self._eval_from
            self._eval_from = None
        elif isinstance(parsed, StepMetric):
            if self.attempt.first_step_at_s is None:
                self.attempt.first_step_at_s = now - self.start
            self.attempt.step_seconds[parsed.step] = parsed.seconds

    def finish(self, outcome: str, peak_memory: tuple[float, str] | None, maxtext_end: float | None = None) -> Attempt:
        end = self.clock()
        self.attempt.maxtext_end_s = (maxtext_end if maxtext_end is not None else end) - self.start
        self.attempt.wall_s = end - self.start
        self.attempt.outcome = outcome
        if peak_memory is not None:
            self.attempt.peak_memory_bytes, self.attempt.peak_memory_source = peak_memory
        return self.attempt


def append_attempt(run_dir: str, attempt: Attempt) -> None:
    """One file per attempt under logs/attempts/ (local or gs://); a later attempt never rewrites an earlier one."""
    import fsspec

    fs, folder = fsspec.core.url_to_fs(f"{run_dir.rstrip('/')}/{ATTEMPTS_DIR}")
    fs.makedirs(folder, exist_ok=True)
    name = f"{folder}/{attempt.started_at:.6f}-{os.getpid()}.json"
    body = json.dumps(attempt.to_json(), sort_keys=True).encode()
    if "file" in fs.protocol:  # a string or a tuple of names
        tmp = f"{name}.tmp"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, name)  # atomic: a reader never sees half an attempt
    else:
        fs.pipe_file(name, body)  # object stores write whole objects


def read_attempts(run_dir: str) -> list[Attempt]:
    """The run folder's attempts, oldest first."""
    import fsspec

    fs, folder = fsspec.core.url_to_fs(f"{run_dir.rstrip('/')}/{ATTEMPTS_DIR}")
    if not fs.isdir(folder):
        return []
    attempts = []
    for path in sorted(p for p in fs.ls(folder, detail=False) if p.endswith(".json")):
        with fs.open(path, "r") as f:
            attempts.append(Attempt.from_json(json.load(f)))
    return sorted(attempts, key=lambda a: a.started_at)
