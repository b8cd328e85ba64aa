"""MaxText really trains on a produced mixture: a few steps on CPU, as the training stage will run it."""

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from marin_assets.tokenize.mixture_info import check_vocab_fits, load_mixture_info

STEPS = 6
STEP_LINE = re.compile(r"completed step: (\d+), seconds: [\d.]+,.*? loss: ([\d.naif]+),")
EVAL_LINE = re.compile(r"Completed eval after train step (\d+), loss=([\d.naif]+),")
TINY_MODEL = ["base_emb_dim=64", "base_num_query_heads=4", "base_num_kv_heads=4", "head_dim=16", "base_mlp_dim=256",
              "base_num_decoder_layers=2", "per_device_batch_size=4", "learning_rate=1e-3"]
CPU = ["hardware=cpu", "skip_jax_distributed_system=true", "attention=dot_product", "dtype=float32",
       "grain_worker_count=0", "grain_worker_count_eval=0", "enable_checkpointing=false", "log_config=false"]


def _arg(key, value) -> str:
    if isinstance(value, list):
        return f"{key}={value!r}"
    return f"{key}={str(value).lower() if isinstance(value, bool) else value}"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_maxtext_trains_on_the_sample_mixture(built_stage, tmp_path):
    import maxtext

    storage, _ = built_stage
    info = load_mixture_info(storage, "sample")
    vocab_size = 1024
    check_vocab_fits(info, vocab_size)
    base_yml = Path(maxtext.__file__).parent / "configs" / "base.yml"
    command = [
        sys.executable, "-m", "maxtext.trainers.pre_train.train", str(base_yml),
        "run_name=tokenize_smoke", f"base_output_directory={tmp_path / 'runs'}",
        *(_arg(k, v) for k, v in info.maxtext_args.items()),
        *CPU, *TINY_MODEL, f"vocab_size={vocab_size}", f"steps={STEPS}", "log_period=5",
        "eval_interval=5", "eval_steps=2",
    ]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "HF_HUB_OFFLINE": "1", "DECOUPLE_GCLOUD": "TRUE"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=540)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert "tokenizer_type=huggingface" in " ".join(command) and f"Tokenizer path: {info.tokenizer_uri}" in log
    steps = [(int(s), float(loss)) for s, loss in STEP_LINE.findall(log)]
    assert steps and steps[-1][0] == STEPS - 1, log[-4000:]  # data errors end "successfully": check the last step
    assert all(math.isfinite(loss) for _, loss in steps)
    evals = [(int(s), float(loss)) for s, loss in EVAL_LINE.findall(log)]
    assert evals and all(math.isfinite(loss) for _, loss in evals)
