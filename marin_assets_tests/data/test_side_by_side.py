"""Jobs run side by side from driver threads: every result under its name, a failure raised."""

import threading

import pytest

from marin_assets.data.side_by_side import run_side_by_side


def test_results_keep_their_group_and_name_and_the_jobs_overlap():
    barrier = threading.Barrier(3, timeout=10)  # passes only if three jobs are in flight at once

    def job(value):
        def run():
            barrier.wait()
            return value
        return run

    assert run_side_by_side({"a": {"x": job(1), "y": job(2)}, "b": {"x": job(3)}}) == {"a": {"x": 1, "y": 2},
                                                                                       "b": {"x": 3}}


def test_a_failed_job_is_raised():
    def fails():
        raise RuntimeError("write failed")

    with pytest.raises(RuntimeError, match="write failed"):
        run_side_by_side({"a": {"ok": lambda: 1, "bad": fails}})
