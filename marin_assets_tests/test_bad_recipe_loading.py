"""A bad recipe of one stage: the CLI prints one clear line (file, field, reason), no traceback; the
other stages still load; the broken stage's placeholder asset fails with that message."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.cli import main
from marin_assets.core.recipes import RecipeError
from marin_assets.stage_loading import broken_stage, load_stage

PACKAGE = Path(__file__).resolve().parents[1] / "marin_assets"
MESSAGE = "field 'runs.tiny-sample.checkpoint.period': Input should be greater than 0"


@pytest.fixture
def bad_recipes(tmp_path):
    """The shipped recipes with one bad field in training/runs.yaml (sample data linked alongside)."""
    shutil.copytree(PACKAGE / "recipes", tmp_path / "recipes")
    (tmp_path / "sample_data").symlink_to(PACKAGE / "sample_data")
    runs = tmp_path / "recipes" / "training" / "runs.yaml"
    runs.write_text(runs.read_text().replace("checkpoint: {period: 10}", "checkpoint: {period: -10}", 1))
    return {"MARIN_RECIPES_DIR": str(tmp_path / "recipes"), "MARIN_DATA_ROOTS": str(tmp_path / "sample_data"),
            "DAGSTER_HOME": str(tmp_path / "home"), "runs": runs}


@pytest.mark.slow
def test_cli_with_a_bad_training_recipe_plans_the_other_stages_and_names_file_and_field(bad_recipes):
    os.makedirs(bad_recipes["DAGSTER_HOME"])
    env = {**os.environ, **{k: v for k, v in bad_recipes.items() if k != "runs"}}
    out = subprocess.run([sys.executable, "-m", "marin_assets.cli", "materialize-all", "--plan"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if "not loaded" in line]
    # evaluation evaluates the training runs, so the same recipe error disables it too (and nothing else)
    assert sorted(errors) == [f"stage {stage} not loaded: {bad_recipes['runs']}: invalid training run: {MESSAGE}"
                              for stage in ("evaluation", "train")]  # the defs/ folders load in name order
    assert "would materialize raw_corpus" in out.stdout or "would materialize source_files" in out.stdout
    assert "would materialize train_recipe_error" in out.stdout


def test_the_broken_stage_loads_as_one_asset_that_fails_with_the_message(bad_recipes, monkeypatch):
    monkeypatch.setenv("MARIN_RECIPES_DIR", bad_recipes["MARIN_RECIPES_DIR"])
    monkeypatch.setenv("MARIN_DATA_ROOTS", bad_recipes["MARIN_DATA_ROOTS"])
    monkeypatch.delitem(sys.modules, "marin_assets.defs.train.definitions", raising=False)
    defs = load_stage("train", "marin_assets.defs.train.definitions")
    placeholder = defs.get_assets_def("train_recipe_error")
    assert MESSAGE in placeholder.descriptions_by_key[dg.AssetKey("train_recipe_error")]
    with pytest.raises(RecipeError, match=MESSAGE.replace("'", ".").replace("(", r"\(")):
        dg.materialize([placeholder])
    monkeypatch.delitem(sys.modules, "marin_assets.defs.train.definitions", raising=False)


def test_cli_prints_a_recipe_error_as_one_line_without_traceback(capsys, monkeypatch):
    def broken(_args):
        raise RecipeError("recipes/nightly.yaml: invalid NightlyPlan recipe: field 'stages': Field required")

    monkeypatch.setattr("marin_assets.governance.cli_gc.run_gc", broken)
    from marin_assets.governance import cli_gc

    monkeypatch.setattr(cli_gc, "register", lambda commands: commands.add_parser("gc").set_defaults(handler=broken))
    assert main(["gc"]) == 2
    err = capsys.readouterr().err
    assert err == "marin: error: recipes/nightly.yaml: invalid NightlyPlan recipe: field 'stages': Field required\n"


def test_placeholder_is_named_after_the_stage():
    assert broken_stage("data", "x").get_assets_def("data_recipe_error").group_names_by_key[
        dg.AssetKey("data_recipe_error")] == "data"


def test_a_recipe_broken_after_the_modules_were_imported_breaks_its_stage_when_the_stage_loads(tmp_path, monkeypatch):
    """The stages build their definitions when they load, not when imported: a module-level recipe read
    would have kept the good recipe of the import and loaded the data stage as if nothing were wrong."""
    import marin_assets.defs.data.definitions  # noqa: F401 - imported with the shipped, valid recipes

    shutil.copytree(PACKAGE / "recipes", tmp_path / "recipes")
    (tmp_path / "sample_data").symlink_to(PACKAGE / "sample_data")
    cleaning = tmp_path / "recipes" / "cleaning.yaml"
    cleaning.write_text(cleaning.read_text().replace("scope: source", "scope: everywhere", 1))
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(tmp_path / "recipes"))
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(tmp_path / "sample_data"))
    data = load_stage("data", "marin_assets.defs.data.definitions")
    assert [key.to_user_string() for asset in data.assets for key in asset.keys] == ["data_recipe_error"]
    description = data.get_assets_def("data_recipe_error").descriptions_by_key[dg.AssetKey("data_recipe_error")]
    assert str(cleaning) in description and "field 'dedup.scope'" in description
    tokenize = load_stage("tokenize", "marin_assets.defs.tokenize.definitions")  # another stage is unaffected
    assert {"tokenizer", "tokenized_source", "mixture"} <= {k.to_user_string() for a in tokenize.assets for k in a.keys}
