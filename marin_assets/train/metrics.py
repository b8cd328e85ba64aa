"""Read MaxText's progress: its stdout lines (live) and its TensorBoard event files (after the run).

TensorBoard files are read with tensorboardX's protobufs, without TensorFlow. After a resume a run
folder holds one event file per attempt; events are merged by step, later attempts winning. The
folder may be local or on gs:// (TPU runs): it is read through fsspec, like every run-folder file.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import fsspec

STEP_LINE = re.compile(
    r"completed step: (?P<step>\d+), seconds: (?P<seconds>[\d.]+),"
    r"(?:.*?TFLOP/s/device: (?P<tflops>[\d.]+),)?(?:.*?Tokens/s/device: (?P<tokens_per_s>[\d.]+),)?"
    r".*? loss: (?P<loss>[\d.naif]+),"
)
EVAL_LINE = re.compile(
    r"Completed eval after train step (?P<step>\d+), loss=(?P<loss>[\d.naif]+),.*?total_weights=(?P<weights>[\d.]+)"
)
STOPPED_LINE = re.compile(r"Training stopped: (?P<reason>.*)")
RESTORED_LINE = re.compile(r"restoring from this run's directory step (?P<step>\d+)")


@dataclass(frozen=True)
class StepMetric:
    step: int
    loss: float
    seconds: float
    tflops_per_s: float | None
    tokens_per_s: float | None


@dataclass(frozen=True)
class EvalMetric:
    step: int
    loss: float
    tokens: float


def parse_line(line: str) -> StepMetric | EvalMetric | str | None:
    """One log line -> a step metric, an eval metric, a 'Training stopped' reason, or None."""
    if m := STEP_LINE.search(line):
        return StepMetric(
            step=int(m["step"]),
            loss=float(m["loss"]),
            seconds=float(m["seconds"]),
            tflops_per_s=float(m["tflops"]) if m["tflops"] else None,
            tokens_per_s=float(m["tokens_per_s"]) if m["tokens_per_s"] else None,
        )
    if m := EVAL_LINE.search(line):
        return EvalMetric(step=int(m["step"]), loss=float(m["loss"]), tokens=float(m["weights"]))
    if m := STOPPED_LINE.search(line):
        return m["reason"]
    return None


def _read_records(fs, path: str):
    """TFRecord framing: u64 length, u32 crc, payload, u32 crc."""
    with fs.open(path, "rb") as f:
        while len(header := f.read(8)) == 8:
            (length,) = struct.unpack("<Q", header)
            f.read(4)
            payload = f.read(length)
            f.read(4)
            if len(payload) < length:  # a file cut by a kill: keep what is complete
                return
            yield payload


def event_files(tensorboard_dir: str) -> tuple[fsspec.AbstractFileSystem, list[str]]:
    """The filesystem of the folder and its event files, oldest attempt first."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(tensorboard_dir)
    if not fs.isdir(root):
        return fs, []
    files = [p for p in fs.find(root) if p.rsplit("/", 1)[-1].startswith("events.out.tfevents.")]
    return fs, sorted(files, key=_event_file_time)


def read_scalars(tensorboard_dir: str) -> dict[str, dict[int, float]]:
    """tag -> {step: value} over every event file under the folder (local path or URI)."""
    from tensorboardX.proto import event_pb2

    out: dict[str, dict[int, float]] = {}
    fs, files = event_files(tensorboard_dir)
    for path in files:
        for payload in _read_records(fs, path):
            event = event_pb2.Event()
            event.ParseFromString(payload)
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    out.setdefault(value.tag, {})[event.step] = value.simple_value
                elif value.HasField("tensor") and value.tensor.float_val:
                    out.setdefault(value.tag, {})[event.step] = value.tensor.float_val[0]
    return out


def _event_file_time(path: str) -> tuple[int, str]:
    # events.out.tfevents.<unix seconds>.<host>...
    parts = path.rsplit("events.out.tfevents.", 1)[-1].split(".")
    return (int(parts[0]) if parts[0].isdigit() else 0, path)


def series(scalars: dict[str, dict[int, float]], tag: str) -> list[tuple[int, float]]:
    return sorted(scalars.get(tag, {}).items())
