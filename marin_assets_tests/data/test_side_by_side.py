"""Jobs run side by side from driver threads: every result under its name, a failure raised."""

import threading

import pytest

from marin_assets.data.spark.side_by_side import Once, run_side_by_side


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


def test_a_shared_input_is_computed_once_while_jobs_that_do_not_need_it_run():
    computing, release = threading.Event(), threading.Event()
    calls = []

    def tallies():
        calls.append(1)
        computing.set()
        assert release.wait(10)
        return {"kept": 3}

    shared = Once(tallies)

    def independent():  # runs while the shared input is still being computed
        assert computing.wait(10)
        release.set()
        return "done"

    jobs = {"a": {"write": lambda: shared()["kept"], "other_write": lambda: shared()["kept"] + 1,
                  "examples": independent}}  # fmt: skip
    assert run_side_by_side(jobs) == {"a": {"write": 3, "other_write": 4, "examples": "done"}}
    assert calls == [1] and shared() == {"kept": 3} and calls == [1]


def test_a_failed_shared_input_is_raised_and_computed_again_when_asked():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("tallies failed")
        return 7

    shared = Once(flaky)
    with pytest.raises(RuntimeError, match="tallies failed"):
        run_side_by_side({"a": {"write": shared}})
    assert shared() == 7 and len(attempts) == 2
