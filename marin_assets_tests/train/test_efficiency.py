"""MFU, goodput/badput from attempt timelines, and measured-vs-estimated memory (pure; no MaxText)."""

import pytest

from marin_assets.train.attempt_timeline import Attempt, AttemptClock, append_attempt, read_attempts
from marin_assets.train.efficiency import goodput, lost_steps, median_step_s, memory_check, mfu
from marin_assets.train.memory_model import CPU_MOE_RUNTIME_BYTES, CPU_RUNTIME_BYTES, process_estimate_bytes
from marin_assets.train.metrics import parse_line
from marin_assets.train.hardware import ResourceConfig


def step_line(step, seconds):
    return (f"completed step: {step}, seconds: {seconds:.3f}, TFLOP/s/device: 0.033, Tokens/s/device: 26028.163, "
            f"total_weights: 512, loss: 5.000,")


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def feed(clock, timeline, advance, line):
    clock.now += advance
    timeline.observe(line, parse_line(line))


def test_clock_stamps_restore_compile_and_eval_from_maxtext_lines():
    clock = FakeClock()
    timeline = AttemptClock(clock=clock, wall_clock=lambda: 0.0)
    feed(clock, timeline, 1.0, "restoring from this run's directory step 9")
    feed(clock, timeline, 2.0, "Checkpoint manager created!")       # restore took 2 s
    feed(clock, timeline, 5.0, step_line(10, 5.0))                   # compile + first step
    feed(clock, timeline, 0.1, "Started an asynchronous checkpoint save for step 10")
    feed(clock, timeline, 0.6, step_line(11, 0.6))                   # waited 0.5 s on the save
    feed(clock, timeline, 0.1, step_line(12, 0.1))
    feed(clock, timeline, 0.0, "Starting eval after train step 12")
    feed(clock, timeline, 0.7, "Completed eval after train step 12, loss=4.2, total_weights=100.0")
    clock.now += 0.3                                                 # final save
    maxtext_end = clock.now
    clock.now += 0.2                                                 # hashing the checkpoint
    attempt = timeline.finish("finished", (123.0, "cpu peak RSS"), maxtext_end)
    assert attempt.restored_step == 9 and attempt.restore_s == pytest.approx(2.0)
    assert attempt.first_step_at_s == pytest.approx(8.0) and attempt.eval_s == pytest.approx(0.7)
    assert attempt.maxtext_end_s == pytest.approx(9.8) and attempt.wall_s == pytest.approx(10.0)
    assert attempt.peak_memory_bytes == 123.0
    out = goodput([attempt], waiting_s=0.0)
    # the median of steps 11 and 12 (step 10, the first of the attempt, compiled)
    assert out["median_step_s"] == pytest.approx(0.35)
    assert out["badput_s"]["checkpoint_restore"] == pytest.approx(2.0)
    assert out["badput_s"]["startup_compile"] == pytest.approx(8.0 - 2.0 - 0.35)
    # loop 1.8 s: two steps at 0.35, 0.7 s eval, 0.4 s saves (the one waited on, the final one)
    assert out["badput_s"]["checkpoint_save"] == pytest.approx(1.8 - 0.7 - 0.7)
    assert out["badput_s"]["evaluation"] == pytest.approx(0.7)
    # productive: the 3 steps this attempt trained (an attempt without a record counts nothing)
    assert out["productive_s"] == pytest.approx(3 * 0.35) and out["badput_s"]["other"] == pytest.approx(0.2)
    assert out["total_s"] == pytest.approx(10.0)


def attempt(steps, seconds=1.0, restored=None, first=2.0, outcome="finished"):
    times = {s: seconds for s in steps}
    end = first + seconds * (len(steps) - 1)
    return Attempt(started_at=0.0, wall_s=end + 0.5, maxtext_end_s=end, restored_step=restored,
                   first_step_at_s=first, step_seconds=times, outcome=outcome)


def test_goodput_counts_lost_progress_and_waiting_as_badput():
    first = attempt(range(0, 15), outcome="preempted")              # trained 0..14, checkpoint at 9
    second = attempt(range(10, 20), restored=9)                      # resumed from 9: steps 10..14 trained twice
    assert lost_steps([first, second]) == 5
    out = goodput([first, second], waiting_s=4.0)
    assert out["productive_s"] == pytest.approx(20.0) and out["badput_s"]["restarts"] == pytest.approx(5.0)
    assert out["badput_s"]["waiting"] == 4.0 and out["attempts"] == 2
    total = first.wall_s + second.wall_s + 4.0
    assert out["total_s"] == pytest.approx(total) and out["goodput"] == pytest.approx(20.0 / total)
    assert sum(out["badput_s"].values()) + out["productive_s"] == pytest.approx(total)
    # One uninterrupted attempt: nothing lost, goodput higher.
    alone = goodput([attempt(range(0, 20))])
    assert alone["badput_s"]["restarts"] == 0 and alone["goodput"] > out["goodput"]


def test_median_drops_each_attempts_compiling_first_step():
    a = Attempt(started_at=0, step_seconds={0: 30.0, 1: 1.0, 2: 1.0})
    b = Attempt(started_at=1, step_seconds={3: 40.0, 4: 3.0})
    assert median_step_s([a, b]) == 1.0
    assert goodput([])["goodput"] is None


def test_mfu_per_device_and_per_machine():
    assert mfu(395.76, 8, 989.4, "device") == pytest.approx(0.4)
    assert mfu(0.05, 4, 0.4, "machine") == pytest.approx(0.5)  # simulated CPU devices share the machine
    assert mfu(None, 1, 989.4, "device") is None and mfu(1.0, 1, None, "device") is None


def test_memory_check_flags_an_estimate_off_by_more_than_the_tolerance():
    assert memory_check(1.1e9, 1.0e9, 0.15)["within"] is True
    off = memory_check(1.3e9, 1.0e9, 0.15)
    assert off["within"] is False and off["ratio"] == pytest.approx(1.3)
    assert memory_check(None, 1.0e9, 0.15)["within"] is None


def test_cpu_estimate_is_the_process_gpu_estimate_is_one_device():
    cpu = ResourceConfig(chips_per_host=2, memory_gib=8)
    assert process_estimate_bytes(1e6, cpu) == pytest.approx(2e6 + CPU_RUNTIME_BYTES)
    # an MoE trainer's larger CPU runtime (measured), on CPU only: a device's allocator peak has no runtime in it
    assert process_estimate_bytes(1e6, cpu, moe=True) == pytest.approx(2e6 + CPU_RUNTIME_BYTES + CPU_MOE_RUNTIME_BYTES)
    gpu = ResourceConfig(accelerator="gpu", gpu_type="h100-80gb")
    assert process_estimate_bytes(1e9, gpu) == process_estimate_bytes(1e9, gpu, moe=True) == 1e9


def test_attempt_files_round_trip_oldest_first(tmp_path):
    late = Attempt(started_at=20.0, step_seconds={5: 1.0}, restored_step=4)
    early = Attempt(started_at=10.0, step_seconds={0: 1.0, 4: 1.0})
    append_attempt(str(tmp_path), late)
    append_attempt(str(tmp_path), early)
    got = read_attempts(str(tmp_path))
    assert [a.started_at for a in got] == [10.0, 20.0] and got[0].step_seconds == {0: 1.0, 4: 1.0}
    assert read_attempts(str(tmp_path / "none")) == []
