"""W&B settings from the environment, the MaxText keys and process env they give, and their description."""

import importlib.util
import re

import pytest

from marin_assets.train.local_launcher import RESUME_NEUTRAL_KEYS
from marin_assets.train.wandb_tracking import (
    RUN_ID_FIELD,
    WandbSettings,
    WandbUnavailable,
    describe,
    finish_run,
    new_run_id,
    require_installed,
    run_id_for,
    wandb_settings,
)


def test_settings_follow_wandbs_own_environment():
    assert wandb_settings({}) is None
    assert wandb_settings({"WANDB_MODE": "disabled", "WANDB_PROJECT": "p"}) is None
    assert wandb_settings({"WANDB_MODE": "offline"}) == WandbSettings(project="marin", mode="offline")
    assert wandb_settings({"WANDB_PROJECT": "scaling"}) == WandbSettings(project="scaling", mode="")
    assert wandb_settings({"WANDB_PROJECT": "s", "WANDB_MODE": "Online"}) == WandbSettings(project="s", mode="online")


def test_keys_and_env_of_the_training_process():
    settings = WandbSettings(project="scaling", mode="offline")
    keys = settings.maxtext_keys("run-1")
    assert keys == {"enable_wandb": True, "wandb_project_name": "scaling", "wandb_run_name": "run-1"}
    assert set(keys) <= RESUME_NEUTRAL_KEYS  # turning W&B on does not block resuming a run
    assert settings.process_env("run-1-abc", "/runs/run-1") == {
        "WANDB_RUN_ID": "run-1-abc", "WANDB_DIR": "/runs/run-1", "WANDB_PROJECT": "scaling", "WANDB_MODE": "offline"}
    assert "WANDB_MODE" not in WandbSettings(project="p", mode="").process_env("i", "/d")
    run_id = new_run_id("tiny/2 m.x")
    assert re.fullmatch(r"tiny-2-m-x-[0-9a-f]{8}", run_id) and run_id != new_run_id("tiny/2 m.x")


def test_only_a_resumed_attempt_continues_its_wandb_run():
    previous = {RUN_ID_FIELD: "run-1-abc"}
    assert run_id_for("run-1", previous, resuming=True) == "run-1-abc"
    assert run_id_for("run-1", previous, resuming=False) != "run-1-abc"  # started over: a new W&B run
    assert run_id_for("run-1", {}, resuming=True).startswith("run-1-")  # resuming a folder from before W&B


def test_missing_wandb_fails_before_training_names_the_fix():
    settings = WandbSettings(project="p", mode="offline")
    if importlib.util.find_spec("wandb") is None:
        with pytest.raises(WandbUnavailable, match="wandb package is not installed.*WANDB_MODE=disabled"):
            require_installed(settings)
    else:
        require_installed(settings)


def test_description_of_a_run():
    assert finish_run() is None  # no W&B run was opened in this process
    assert describe(None, None).startswith("not configured")
    assert describe(None, WandbSettings("p", "")) == "configured, but the training process opened no W&B run"
    online = {"id": "r-1", "project": "p", "mode": "online", "url": "https://wandb.ai/me/p/runs/r-1", "dir": "/d"}
    assert describe(online, None) == "https://wandb.ai/me/p/runs/r-1"
    offline = {**online, "mode": "offline", "url": None, "dir": "/runs/r/wandb/offline-run-1"}
    assert describe(offline, None) == "offline run r-1 (project p); upload with: wandb sync /runs/r/wandb/offline-run-1"
