"""The TPU training launcher's pod command and config text (the parts that run without a cluster)."""

import os
import subprocess

import pytest
import yaml

from marin_assets.core.storage import Storage
from marin_assets.train.k8s.training import CONFIG_ENV, launch_on_tpu_slice, maxtext_yaml_text, pod_command
from marin_assets.train.run_result import TrainingError


def test_pod_command_writes_the_env_config_and_runs_the_entry_on_it(tmp_path):
    text = 'base_config: base.yml\nrun_name: "it\'s $(not) ${expanded}"\nsteps: 3\n'
    config = tmp_path / "cfg" / "maxtext.yml"
    # The entry here is a module that prints the file it is given: what the pod's entry would read.
    command = pod_command(entry_module="marin_assets_tests.train_k8s.print_file", config_path=str(config))
    done = subprocess.run(command, env={"PATH": os.environ["PATH"], CONFIG_ENV: text,
                                        "PYTHONPATH": os.getcwd()}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert config.read_text() == text == done.stdout
    assert command[:2] == ["sh", "-c"] and "$(" not in command[2]   # nothing for Kubernetes to expand


def test_config_text_is_what_local_runs_write():
    text = maxtext_yaml_text({"steps": 3, "run_name": "r"})
    assert text.splitlines()[1] == "base_config: base.yml"
    assert yaml.safe_load(text) == {"base_config": "base.yml", "steps": 3, "run_name": "r"}


def test_tpu_slice_needs_shared_storage(tmp_path):
    with pytest.raises(TrainingError, match="gs://"):
        launch_on_tpu_slice(None, type("Spec", (), {"run_name": "r"})(), Storage(str(tmp_path)), None, None)


def test_wandb_on_a_slice_adds_maxtexts_keys_and_keeps_the_run_id_across_resumes(tmp_path, monkeypatch):
    from marin_assets.train.k8s.training import POD_WANDB_DIR, wandb_for_slice

    storage, run_dir = Storage(str(tmp_path)), str(tmp_path / "training" / "r")
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    keys = {"steps": 3}
    assert wandb_for_slice(storage, "r", run_dir, None, keys) == {} and keys == {"steps": 3}

    monkeypatch.setenv("WANDB_PROJECT", "marin-tpu")
    first = wandb_for_slice(storage, "r", run_dir, None, keys)
    assert keys == {"steps": 3, "enable_wandb": True, "wandb_project_name": "marin-tpu", "wandb_run_name": "r"}
    assert first["WANDB_PROJECT"] == "marin-tpu" and first["WANDB_DIR"] == POD_WANDB_DIR
    resumed = wandb_for_slice(storage, "r", run_dir, 10, {})
    assert resumed["WANDB_RUN_ID"] == first["WANDB_RUN_ID"]            # the same W&B run continues
    fresh = wandb_for_slice(storage, "r", run_dir, None, {})
    assert fresh["WANDB_RUN_ID"] != first["WANDB_RUN_ID"]              # a new run is a new W&B run
