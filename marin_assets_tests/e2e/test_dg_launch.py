"""The README's CLI is the one Dagster recommends: `dg launch` finds the code location from
pyproject.toml's [tool.dg] and materializes a partition; no README command uses the deprecated one."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from marin_assets_tests.e2e.workspace import make_workspace

REPO = Path(__file__).resolve().parents[2]


def test_readme_commands_use_dg_launch():
    readme = (REPO / "README.md").read_text()
    assert "dagster asset materialize" not in readme
    assert re.search(r"^dg launch --assets \S+", readme, re.M)


@pytest.mark.slow
def test_dg_launch_materializes_a_partition(tmp_path):
    ws = make_workspace(tmp_path)
    proc = ws.materialize("raw_corpus", "debian_licenses")
    assert "RUN_SUCCESS" in proc.stdout + proc.stderr
    assert (ws.storage_root / "raw" / "debian_licenses" / "inventory.json").exists()


def _dg(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").touch()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    return subprocess.run([str(Path(sys.executable).with_name("dg")), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_dg_check_and_list_defs_see_every_stage_folder(tmp_path):
    """`dg check defs` loads the defs/ folder the way `dagster dev` does; `dg list defs` lists the same graph."""
    check = _dg("check", "defs", tmp_path=tmp_path)
    assert check.returncode == 0 and "All definitions loaded successfully" in check.stdout + check.stderr, check.stderr
    listed = _dg("list", "defs", "--json", tmp_path=tmp_path)
    assert listed.returncode == 0, listed.stderr
    keys = {a["asset_key"] for a in json.loads(listed.stdout)["assets"]}
    from marin_assets.definitions import defs
    assert keys == {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    groups = {a["group_name"] for a in json.loads(listed.stdout)["assets"]}
    assert {"data", "tokenize", "train", "scaling", "evaluation", "governance"} <= groups


@pytest.mark.slow
def test_a_broken_stage_recipe_fails_only_its_stage_folder(tmp_path):
    """The defs-folder loader keeps a bad recipe to its stage: `dg check defs` still passes, the stage shows
    one `<stage>_recipe_error` asset naming the file, and every other stage's assets load."""
    import shutil
    recipes = tmp_path / "package" / "recipes"
    shutil.copytree(REPO / "marin_assets" / "recipes", recipes)
    (tmp_path / "package" / "sample_data").symlink_to(REPO / "marin_assets" / "sample_data")  # sources.yaml's ../
    (recipes / "tokenizer.yaml").write_text((recipes / "tokenizer.yaml").read_text() + "\nnot_a_field: 1\n")
    env_extra = {"MARIN_RECIPES_DIR": str(recipes)}
    os.environ.update(env_extra)
    try:
        listed = _dg("list", "defs", "--json", tmp_path=tmp_path)
    finally:
        for k in env_extra:
            os.environ.pop(k)
    assert listed.returncode == 0, listed.stderr
    assets = {a["asset_key"]: a for a in json.loads(listed.stdout)["assets"]}
    assert "tokenize_recipe_error" in assets and "not_a_field" in assets["tokenize_recipe_error"]["description"]
    assert "cleaned_documents" in assets and "training_run" in assets
