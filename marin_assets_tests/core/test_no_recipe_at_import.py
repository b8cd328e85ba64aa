"""No module of the package reads a recipe when it is imported: recipes are read when a stage builds its
definitions (stage_loading) or when an asset runs, so a broken recipe breaks only its stage."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from marin_assets.core.recipes import PACKAGE_RECIPES

REPO = Path(__file__).resolve().parents[2]


def recipe_reads_at_import(tmp_path: Path, *extra: str, path: Path | None = None) -> dict[str, list[str]]:
    """{module: recipe files it read while imported}, in a fresh interpreter over a copy of the recipes."""
    recipes = tmp_path / "recipes"
    if not recipes.exists():
        shutil.copytree(PACKAGE_RECIPES, recipes)
    env = {**os.environ, "MARIN_RECIPES_DIR": str(recipes),
           "PYTHONPATH": os.pathsep.join(str(p) for p in (path, REPO) if p)}  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "marin_assets_tests.core.import_recipe_reads", *extra],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_every_module_reads_no_recipe_and_a_module_that_does_is_caught(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "loads_cleaning_at_import.py").write_text(
        "from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe\n"
        "NGRAM = load_cleaning_recipe().decontamination.ngram\n")
    (extra / "lists_mixtures_at_import.py").write_text(
        "from marin_assets.tokenize.tokenize_recipe import mixture_names\nNAMES = mixture_names()\n")
    reads = recipe_reads_at_import(tmp_path, "loads_cleaning_at_import", "lists_mixtures_at_import", path=extra)
    # the failing cases: a recipe loaded, and a recipe folder listed, at import
    assert reads.pop("loads_cleaning_at_import") == [str(tmp_path / "recipes" / "cleaning.yaml")]
    assert reads.pop("lists_mixtures_at_import") == [str(tmp_path / "recipes" / "mixtures")]
    assert reads == {}  # every module of the package, imported in one interpreter
