"""scripts/gpu_check.sh / benchmarks/gpu_check.py on a CPU machine: argument handling, and the dry path
(the mixture, both runs planned through Dagster on the GPU type, training refused before launch)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import gpu_check  # noqa: E402


@pytest.mark.parametrize("argv, message", [
    (["--steps", "1"], "--steps and --tiny-steps must be >= 2"),
    (["--batch", "0"], "--batch must be >= 1"),
    (["--gpu-type", "h100"], "--gpu-type 'h100' is not in the GPU catalog"),
])
def test_bad_arguments_are_refused_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        gpu_check.parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_runs_are_the_150m_ladder_architecture_at_seq_2048_on_the_gpu_type():
    runs = gpu_check.runs_for(gpu_check.parse_args(["--steps", "300", "--batch", "32", "--gpu-type", "a100-80gb"]))
    big = runs.spec("gpu-150m")
    assert big.model.seq_len == 2048 and big.model.global_batch_size == 32 and big.steps == 300
    assert big.model.architecture.emb_dim == 768 and big.model.architecture.num_layers == 12
    assert big.resources.gpu_type == "a100-80gb" and big.resources.accelerator == "gpu"
    assert runs.spec("gpu-tiny").model.name == "tiny-0.2m"


def test_wheels_folder_must_exist():
    done = subprocess.run(["bash", str(REPO / "scripts/gpu_check.sh"), "--wheels", "/nonexistent/wheels"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--wheels /nonexistent/wheels is not a folder" in done.stderr


@pytest.mark.slow
def test_dry_run_plans_both_runs_and_refuses_training_without_a_gpu(tmp_path):
    done = subprocess.run(["bash", str(REPO / "scripts/gpu_check.sh"), "--dry-run", "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "CUDA JAX: not needed (dry run)" in out and "preflight on h100-80gb" in out
    assert "gpu-150m:" in out and "fits: True" in out
    assert out.count("no CUDA plugin for JAX is installed") == 2  # both runs refused before launch
    assert "GPU numbers: not measured (dry run)" in out
    assert not (tmp_path / "training" / "gpu-150m" / "logs").exists()
