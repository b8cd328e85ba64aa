"""The training entry exits with its own code even when native teardown would abort the interpreter."""

import subprocess
import sys
import textwrap

import pytest

# A stand-in for XLA/TensorStore threads whose destructors abort at teardown: an atexit abort
# runs in exactly the phase the entry must skip (after the work is reported and flushed).
SCRIPT = textwrap.dedent("""
    import atexit, os, sys
    from marin_assets.train import maxtext_entry

    def run(config, log_file):
        atexit.register(os.abort)
        print("reported", flush=True)
        outcome = sys.argv[1]
        if outcome == "preempted":
            sys.exit(maxtext_entry.EXIT_PREEMPTED)
        if outcome == "failed":
            raise maxtext_entry.TrainingFailed("last completed step was 7, expected 59")
        if outcome == "message":
            sys.exit("config names no dataset")

    maxtext_entry.run = run
    maxtext_entry.main(["unused.yml"])
""")


def run_entry(outcome: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, outcome], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("outcome, code", [("finished", 0), ("preempted", 3), ("failed", 1), ("message", 1)])
def test_the_exit_code_is_the_runs_not_the_teardowns(outcome, code):
    done = run_entry(outcome)
    assert done.returncode == code, done.stderr  # an aborting teardown would read -6
    assert done.stdout == "reported\n"  # what was printed before the exit is flushed


def test_a_failure_prints_its_traceback_before_exiting():
    done = run_entry("failed")
    assert "TrainingFailed: last completed step was 7, expected 59" in done.stderr
    assert "Traceback" in done.stderr


def test_an_exit_with_a_message_prints_it_like_the_interpreter():
    done = run_entry("message")
    assert done.stderr.strip().endswith("config names no dataset")
