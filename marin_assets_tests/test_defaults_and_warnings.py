"""What a fresh instance does by itself matches the README, and loading the code location is quiet
(with Python's default warning filters, which a CLI user has)."""

import subprocess
import sys

import dagster as dg

from marin_assets.definitions import defs


def test_automation_and_source_watching_run_by_default_training_schedules_do_not():
    assert defs.resolve_sensor_def("default_automation_condition_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    assert defs.resolve_sensor_def("source_files_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    for schedule in defs.schedules or []:  # every shipped schedule that starts training is off until switched on
        assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED, schedule.name


def test_loading_the_code_location_prints_no_warning_but_other_warnings_still_show():
    probe = "import marin_assets.definitions as d; d.defs.resolve_asset_graph()"
    quiet = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "Warning" not in quiet.stderr, quiet.stderr
    # The filter names exact messages: a different beta feature still warns.
    loud = ("import warnings, dagster as dg; import marin_assets.definitions; "
            "warnings.warn('Function `other_thing` is currently in beta', dg.BetaWarning)")
    shown = subprocess.run([sys.executable, "-c", loud], capture_output=True, text=True, check=True)
    assert "other_thing" in shown.stderr


def test_the_project_calls_no_deprecated_dagster_api():
    """With deprecation warnings shown, loading the code location and resolving its jobs warns from no
    marin_assets file (e.g. define_asset_job(partitions_def=...), inferred from the assets since 1.x)."""
    probe = ("import marin_assets.definitions as d; d.defs.resolve_asset_graph(); "
             "[d.defs.resolve_job_def(j.name) for j in d.defs.jobs]")
    shown = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", probe],
                           capture_output=True, text=True, check=True)
    ours = [line for line in shown.stderr.splitlines() if "marin_assets/" in line and "Warning" in line]
    assert not ours, "\n".join(ours)
