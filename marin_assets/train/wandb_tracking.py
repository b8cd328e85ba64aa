"""Weights & Biases logging of training runs, through MaxText's own W&B support.

MaxText 0.2.5 logs every train and eval metric to W&B when its config has `enable_wandb: true`:
process 0 calls `wandb.init(project=wandb_project_name, name=wandb_run_name, resume="allow")` and
`wandb.log(metrics, step=step)` each step. It never finishes the run; the training process does
(`finish_run`), which also tells the orchestrator where the run is.

W&B is configured by its usual environment: WANDB_PROJECT and/or WANDB_MODE (`offline` writes the
run under the run folder and needs no network; `disabled`, or neither variable, turns it off).
`wandb` is imported only by the training process (by MaxText), and only when W&B is configured.
A resumed run continues the same W&B run: its id is kept in the run folder (`run_id_for`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import uuid
from dataclasses import dataclass

DEFAULT_PROJECT = "marin"
# MaxText config keys that only say where metrics go: a resumed run may change them.
MAXTEXT_KEYS = ("enable_wandb", "wandb_project_name", "wandb_run_name")
# Field of the run folder's inputs.json that keeps the W&B run id across attempts.
RUN_ID_FIELD = "wandb_run_id"


class WandbUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class WandbSettings:
    project: str
    mode: str  # "online", "offline", or "" (wandb's own default)

    def maxtext_keys(self, run_name: str) -> dict:
        return {"enable_wandb": True, "wandb_project_name": self.project, "wandb_run_name": run_name}

    def process_env(self, run_id: str, wandb_dir: str) -> dict[str, str]:
        """Environment of the training process: a stable run id (resume) and a local folder for W&B files."""
        env = {"WANDB_RUN_ID": run_id, "WANDB_DIR": wandb_dir, "WANDB_PROJECT": self.project}
        if self.mode:
            env["WANDB_MODE"] = self.mode
        return env


def wandb_settings(env=os.environ) -> WandbSettings | None:
    mode = env.get("WANDB_MODE", "").strip().lower()
    project = env.get("WANDB_PROJECT", "").strip()
    if mode == "disabled" or not (project or mode):
        return None
    return WandbSettings(project=project or DEFAULT_PROJECT, mode=mode)


def require_installed(settings: WandbSettings) -> None:
    """Fail before training, not minutes into it, when W&B is asked for but cannot log."""
    if importlib.util.find_spec("wandb") is None:
        raise WandbUnavailable(
            f"W&B is configured (WANDB_PROJECT={settings.project!r}, WANDB_MODE={settings.mode or 'unset'!r}) "
            "but the wandb package is not installed in this environment; install it, or set WANDB_MODE=disabled"
        )


def new_run_id(run_name: str) -> str:
    """A W&B run id for a fresh run folder (W&B ids: letters, digits, '-', '_')."""
    return f"{re.sub(r'[^A-Za-z0-9_-]', '-', run_name)[:48]}-{uuid.uuid4().hex[:8]}"


def run_id_for(run_name: str, previous_inputs: dict, resuming: bool) -> str:
    """This attempt's W&B run id: a resumed run continues its W&B run, a fresh one starts a new one."""
    return (resuming and previous_inputs.get(RUN_ID_FIELD)) or new_run_id(run_name)


def finish_run() -> dict | None:
    """Finish the W&B run MaxText opened in this process and describe it; None when it opened none."""
    wandb = sys.modules.get("wandb")  # never import it here: only MaxText decides to use it
    run = getattr(wandb, "run", None)
    if run is None:
        return None
    mode = run.settings.mode
    info = {"id": run.id, "project": run.project, "mode": mode,
            "url": run.url if mode == "online" else None, "dir": run.settings.sync_dir}
    run.finish()
    return info


def describe(info: dict | None, settings: WandbSettings | None) -> str:
    """One line for the materialization: the run's link, or how to sync an offline run."""
    if info is None:
        if settings is None:
            return "not configured (set WANDB_PROJECT, or WANDB_MODE=offline to log without network)"
        return "configured, but the training process opened no W&B run"
    if info.get("url"):
        return info["url"]
    return f"offline run {info['id']} (project {info['project']}); upload with: wandb sync {info['dir']}"
