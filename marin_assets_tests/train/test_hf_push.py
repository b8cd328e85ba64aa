"""The HF export's publication: Hub upload through huggingface_hub against a stub server, gs:// copy to the emulator."""

import os
import subprocess
import sys

import pytest

from marin_assets.train.hf_push import PushSettings, check_push_settings, push_export
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)
from marin_assets_tests.train.stub_hub import StubHub


def _folder(tmp_path):
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_bytes(b"\x00weights")
    return folder


def test_push_creates_the_repo_and_commits_every_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    folder = _folder(tmp_path)
    with StubHub() as hub:
        done = push_export(str(folder), PushSettings(hub_repo="marin/tiny-sample"), "export", endpoint=hub.endpoint)
    spec = hub.repos["marin/tiny-sample"]
    assert spec.get("visibility") == "private" or spec.get("private") is True, spec
    assert hub.files["marin/tiny-sample"] == {"config.json": b'{"model_type": "llama"}',
                                               "model.safetensors": b"\x00weights"}
    assert done == [f"{hub.endpoint}/marin/tiny-sample/commit/abc123"]


def test_copy_to_a_gs_prefix(tmp_path, gcs_emulator):  # noqa: F811
    folder = _folder(tmp_path)
    prefix = gcs_emulator.root("exports/tiny")
    assert push_export(str(folder), PushSettings(gcs_prefix=prefix), "export") == [prefix]
    import fsspec

    fs, _ = fsspec.core.url_to_fs(prefix)
    assert fs.cat_file(f"{prefix}/model.safetensors") == b"\x00weights"


@pytest.mark.parametrize("settings, environ, message", [
    (PushSettings(hub_repo="marin/x"), {}, "HF_TOKEN is empty"),
    (PushSettings(hub_repo="no-owner"), {"HF_TOKEN": "t"}, "must be 'owner/name'"),
    (PushSettings(gcs_prefix="/local/path"), {}, "must start with gs://"),
    (PushSettings(hub_repo="marin/x"), {"HF_TOKEN": "t", "HF_HUB_OFFLINE": "1"}, r"\$HF_HUB_OFFLINE puts"),
    (PushSettings(hub_repo="marin/x"), {"HF_TOKEN": "t", "TRANSFORMERS_OFFLINE": "yes"}, r"\$TRANSFORMERS_OFFLINE"),
])
def test_bad_push_settings_are_refused_naming_the_knob(settings, environ, message):
    with pytest.raises(ValueError, match=message):
        check_push_settings(settings, environ)


def test_a_process_whose_hub_client_was_imported_offline_refuses_to_push(tmp_path):
    """huggingface_hub freezes HF_HUB_OFFLINE at its first import (the cause of this file's flaky push
    test: another test of the same worker had imported it with the variable set). Such a process
    must refuse the push naming the variable, even after the variable is gone from its environment."""
    folder = _folder(tmp_path)
    script = (
        "import os, huggingface_hub.constants\n"
        "del os.environ['HF_HUB_OFFLINE']\n"
        "from marin_assets.train.hf_push import PushSettings, push_export\n"
        f"push_export({str(folder)!r}, PushSettings(hub_repo='marin/x'), 'export', endpoint='http://127.0.0.1:9')\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_TOKEN": "hf_test"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "imported with HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set" in done.stderr, done.stderr[-2000:]
