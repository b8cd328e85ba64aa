"""Publish an exported HF folder: to a Hugging Face Hub repository and/or a gs:// prefix (recipe switch).

Built with `huggingface_hub.HfApi` (create_repo + upload_folder; token from $HF_TOKEN, endpoint
from $HF_ENDPOINT as the client reads them) and fsspec; tests run it against a stub Hub server.
"""

from __future__ import annotations

import os

import fsspec
from pydantic import Field

from marin_assets.core.recipes import Recipe

TOKEN_ENV = "HF_TOKEN"
OFFLINE_ENVS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # either puts huggingface_hub offline


class PushSettings(Recipe):
    hub_repo: str | None = Field(default=None, description="Hub repository id (owner/name); null: no push")
    private: bool = True
    gcs_prefix: str | None = Field(default=None, description="gs:// prefix the folder is copied under; null: no copy")


def check_push_settings(settings: PushSettings, environ=os.environ) -> None:
    """Refuse before exporting when a push is asked for without its credentials or with a bad target."""
    if settings.hub_repo is not None:
        if settings.hub_repo.count("/") != 1:
            raise ValueError(f"hf_export.yaml: push.hub_repo {settings.hub_repo!r} must be 'owner/name'")
        if not environ.get(TOKEN_ENV):
            raise ValueError(f"hf_export.yaml: push.hub_repo is set but ${TOKEN_ENV} is empty (a write token)")
        from huggingface_hub.constants import ENV_VARS_TRUE_VALUES

        for name in OFFLINE_ENVS:
            if str(environ.get(name, "")).upper() in ENV_VARS_TRUE_VALUES:
                raise ValueError(f"hf_export.yaml: push.hub_repo is set but ${name} puts the Hub client offline")
    if settings.gcs_prefix is not None and not settings.gcs_prefix.startswith("gs://"):
        raise ValueError(f"hf_export.yaml: push.gcs_prefix {settings.gcs_prefix!r} must start with gs://")


def push_export(folder: str, settings: PushSettings, message: str, endpoint: str | None = None) -> list[str]:
    """Upload `folder` where the settings say; returns where it went (Hub commit URL, gs:// URI)."""
    check_push_settings(settings)
    done = []
    if settings.hub_repo is not None:
        from huggingface_hub import HfApi, is_offline_mode

        if is_offline_mode():  # huggingface_hub reads HF_HUB_OFFLINE once, when this process first imported it
            raise ValueError(f"hf_export.yaml: push.hub_repo is set but huggingface_hub was imported with "
                             f"{' or '.join(OFFLINE_ENVS)} set, so this process cannot reach the Hub")
        api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT"), token=os.environ[TOKEN_ENV])
        api.create_repo(settings.hub_repo, private=settings.private, exist_ok=True)
        commit = api.upload_folder(folder_path=folder, repo_id=settings.hub_repo, commit_message=message)
        done.append(str(commit.commit_url))
    if settings.gcs_prefix is not None:
        fs, _ = fsspec.core.url_to_fs(settings.gcs_prefix)
        fs.put(folder.rstrip("/") + "/", settings.gcs_prefix.rstrip("/") + "/", recursive=True)
        done.append(settings.gcs_prefix)
    return done
