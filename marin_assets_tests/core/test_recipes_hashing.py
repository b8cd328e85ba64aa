import pytest

from marin_assets.core.hashing import combine_hashes, hash_json
from marin_assets.core.recipes import Recipe, RecipeError, load_recipe


class Tiny(Recipe):
    name: str
    steps: int


def test_bad_recipe_names_file_and_field(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: x\nsteps: many\n")
    with pytest.raises(RecipeError) as err:
        load_recipe(path, Tiny)
    assert str(path) in str(err.value) and "'steps'" in str(err.value)


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: x\nsteps: 3\nstesp: 4\n")
    with pytest.raises(RecipeError, match="stesp"):
        load_recipe(path, Tiny)


def test_invalid_yaml_and_missing_file(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(RecipeError, match="not valid YAML"):
        load_recipe(path, Tiny)
    with pytest.raises(RecipeError, match="not found"):
        load_recipe(tmp_path / "missing.yaml", Tiny)


def test_hashes_are_canonical():
    assert hash_json({"a": 1, "b": [1, 2]}) == hash_json({"b": [1, 2], "a": 1})
    assert combine_hashes([("x", "1"), ("y", "2")]) == combine_hashes([("y", "2"), ("x", "1")])
    assert combine_hashes([("x", "1")]) != combine_hashes([("x", "2")])
