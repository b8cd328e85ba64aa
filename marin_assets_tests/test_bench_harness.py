"""The benchmark harness reports medians, ranges, cores per side, the ratio and a busy-machine warning."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import harness  # noqa: E402


def test_report_prints_both_sides_ratio_and_warns_on_unequal_cores_and_few_runs(capsys):
    ours, peer = harness.Side("ours", cores=2, rates=[30, 10, 20]), harness.Side("peer", cores=1, rates=[5, 4])
    ratio = harness.report("x", ours, peer, unit="docs/s", target=3)
    out = capsys.readouterr().out
    assert ratio == 20 / 4.5
    assert "median 20 docs/s (range 10-30, 3 runs, 2 cores)" in out and "1 core)" in out
    assert "fewer than 3 runs" in out and "unequal cores" in out and "target >= 3: met" in out


def test_busy_machine_is_flagged():
    assert harness.busy_warning((1.5, 0, 0), cores=2).startswith("WARNING: load average 1.50")
    assert harness.busy_warning((0.4, 0, 0), cores=2) is None


def test_time_records_a_rate_and_keeps_the_result():
    side = harness.Side("s", cores=1)
    assert side.time(lambda: "decisions", units=10) == "decisions" and side.last == "decisions"
    assert len(side.rates) == 1 and side.rates[0] > 0


def test_only_the_load_before_the_benchmark_counts_as_busy(capsys, monkeypatch):
    sides = [harness.Side(name, cores=2, rates=[1, 1, 1]) for name in ("ours", "peer")]
    monkeypatch.setattr(harness, "machine_cores", lambda: 2)
    monkeypatch.setattr(harness, "load_average", lambda: (2.0, 2.0, 2.0))  # the benchmark's own two cores
    monkeypatch.setattr(harness.report, "_load_at_import", (0.2, 0.2, 0.2), raising=False)
    harness.report("quiet start", *sides, unit="docs/s")
    assert "WARNING: load" not in capsys.readouterr().out
    monkeypatch.setattr(harness.report, "_load_at_import", (1.6, 1.6, 1.6), raising=False)
    harness.report("busy start", *sides, unit="docs/s")
    assert "WARNING: load average 1.60" in capsys.readouterr().out
