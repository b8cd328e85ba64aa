"""The trainer process prints no notices about optional dependencies it does not use.

The modules that emit them (MaxText's metric logger, profiler and tokenizer, which imports
transformers) are imported in a fresh process, as the trainer imports them: first as they are, to
show the lines really come from there, then after maxtext_entry's filter is installed.
"""

import os
import subprocess
import sys

EMITTERS = "import maxtext.common.metric_logger, maxtext.common.profiler, maxtext.input_pipeline.tokenizer"
QUIET = "from marin_assets.fastpath.maxtext.trainer_quiet import quiet_optional_dependencies; quiet_optional_dependencies()"
NOTICES = ("[NO-OP] mldiagnostics: dependency missing", "PyTorch was not found")


def _output(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "TRANSFORMERS_NO_ADVISORY_WARNINGS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout + proc.stderr


def test_maxtext_and_transformers_notices_are_filtered_at_their_source():
    unfiltered = _output(EMITTERS)
    assert all(notice in unfiltered for notice in NOTICES), unfiltered[-2000:]

    quiet = _output(f"{QUIET}; {EMITTERS}; from maxtext.common import gcloud_stub; "
                    "mldiag, is_stub = gcloud_stub.mldiagnostics_modules(); assert is_stub; mldiag.machinelearning_run()")
    assert not [notice for notice in NOTICES if notice in quiet], quiet[-2000:]


def test_the_trainer_installs_the_filter_before_importing_maxtext():
    import inspect

    from marin_assets.train import maxtext_entry

    source = inspect.getsource(maxtext_entry.run)
    assert 0 < source.index("quiet_optional_dependencies()") < source.index("from maxtext.trainers")
