"""The one registry mechanism: discovery of its package, duplicates named at import, unknown names named in full."""

from __future__ import annotations

import sys
import textwrap

import pytest

from marin_assets.core.import_graph import closure, import_graph
from marin_assets.core.registries import Registry, UnknownName


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """A package `toyplug` whose registry is declared in toyplug/base.py and whose items are modules beside it."""
    package = tmp_path / "toyplug"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text(textwrap.dedent('''
        from marin_assets.core.registries import Registry
        THINGS = Registry("toy thing", package="toyplug")
    '''))
    (package / "helper.py").write_text("raise RuntimeError('a helper that registers nothing is not imported')\n")
    (package / "alpha.py").write_text("from toyplug.base import THINGS\n\n@THINGS.register('alpha')\nclass Alpha: ...\n")
    (package / "nested").mkdir()
    (package / "nested" / "__init__.py").write_text("")
    (package / "nested" / "beta.py").write_text("from toyplug.base import THINGS\n\n@THINGS.register('beta')\ndef beta(): ...\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m == "toyplug" or m.startswith("toyplug.")]:
        del sys.modules[name]


def test_every_module_of_the_package_is_found_on_first_lookup_without_an_import(plugin_package):
    from toyplug.base import THINGS

    assert "toyplug.alpha" not in sys.modules  # nothing imported it by hand
    assert THINGS.names() == ["alpha", "beta"]  # nested packages too
    assert "toyplug.helper" not in sys.modules  # it does not import toyplug.base: it cannot register
    assert THINGS.module_of("alpha") == "toyplug.alpha"
    assert {m.__name__ for m in THINGS.modules()} == {"toyplug.alpha", "toyplug.nested.beta"}


def test_a_name_registered_twice_fails_naming_both_modules(plugin_package):
    (plugin_package / "gamma.py").write_text("from toyplug.base import THINGS\n\n@THINGS.register('alpha')\nclass Again: ...\n")
    from toyplug.base import THINGS

    with pytest.raises(ValueError, match="toy thing 'alpha' is registered twice: by toyplug.alpha and by toyplug.gamma"):
        THINGS.names()


def test_a_broken_module_fails_every_lookup_not_once(plugin_package):
    (plugin_package / "broken.py").write_text("import toyplug.base\nraise RuntimeError('broken plugin')\n")
    from toyplug.base import THINGS

    for _ in range(2):  # not a half-filled registry on the second lookup
        with pytest.raises(RuntimeError, match="broken plugin"):
            THINGS.lookup("alpha")


def test_an_unknown_name_names_the_recipe_file_the_field_and_the_known_names(plugin_package):
    from toyplug.base import THINGS

    with pytest.raises(UnknownName, match=r"cleaning.yaml: filters.x: unknown toy thing 'x'; known: alpha, beta"):
        THINGS.check("x", "cleaning.yaml", "filters.x")
    with pytest.raises(KeyError):  # dict-style callers still get a KeyError
        THINGS["x"]
    assert THINGS.check("alpha", "cleaning.yaml", "filters.alpha") == "alpha"


def test_a_registry_without_a_package_is_a_plain_table():
    table = Registry("launcher")
    table.register("here")(print)
    assert table.lookup("here") is print and list(table) == ["here"]


def test_the_import_graph_versions_what_a_registry_discovers():
    """The filter registry's module reaches every filter module in the code-version closure (not a static import),
    and a source's file listing reaches the format classes, not the cleaning code beside them in data/formats."""
    filters = "marin_assets.data.clean.filters"
    reached = closure([f"{filters}.filter_base"])
    assert {f"{filters}.gopher_quality", f"{filters}.c4", f"{filters}.fineweb"} <= reached
    listing = closure(["marin_assets.data.sources.source_files"])
    assert "marin_assets.data.formats.jsonl" in listing and "marin_assets.data.clean.cleaning_rows" not in listing
    # the registry itself (every asset's gate reaches it through licenses) does not version the format readers
    assert "marin_assets.data.formats.jsonl" not in closure(["marin_assets.data.sources.source_registry"])
    assert f"{filters}.c4" not in import_graph()[f"{filters}.filter_base"]  # so the layering/cycle checks ignore it


def test_an_unknown_filter_in_the_cleaning_recipe_names_file_field_and_known_filters(tmp_path):
    from marin_assets.core.recipes import RecipeError
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe

    path = tmp_path / "cleaning.yaml"
    path.write_text("filters:\n  gopher_qualty: {}\n")
    with pytest.raises(RecipeError, match=r"cleaning.yaml: .*field 'filters'.*unknown quality filter 'gopher_qualty'; "
                                          r"known: c4, fineweb, gopher_quality, gopher_repetition"):
        load_cleaning_recipe(str(path))


def test_the_recipe_order_of_filters_is_the_order_they_run():
    from marin_assets.data.clean.filters.pipeline import FilterSettings

    def order(settings):
        return [f.name for f, _ in settings.pipeline()]

    assert order(FilterSettings()) == ["gopher_repetition", "gopher_quality", "c4", "fineweb"]
    assert order(FilterSettings(fineweb={}, c4={})) == ["gopher_repetition", "gopher_quality", "fineweb", "c4"]
    # a filter not named keeps its default, placed before the first named one that follows it by default
    assert order(FilterSettings(gopher_repetition=None, c4={"min_num_sentences": 3})) == ["gopher_quality", "c4", "fineweb"]


def test_the_filter_order_survives_the_jobs_values_and_changes_the_recipe_hash():
    """The canonical JSON that hashes a recipe and carries it to Spark workers (cleaning_values) sorts keys:
    the run order travels as `filters.order`, so a Dataproc worker runs the same order as the driver, and
    reordering the section changes the recipe's hash (its code version). Before, the workers ran the filters
    in key order (c4 first) and a reorder hashed the same."""
    import json

    from marin_assets.core.hashing import canonical_json, hash_json
    from marin_assets.data.clean.filters.pipeline import FilterSettings

    c4_second = FilterSettings.model_validate({"gopher_repetition": {}, "c4": {}, "gopher_quality": {}})
    travelled = FilterSettings.model_validate(json.loads(canonical_json(c4_second.model_dump(mode="json"))))
    assert travelled.order == c4_second.order == ["gopher_repetition", "c4", "gopher_quality", "fineweb"]
    assert [f.name for f, _ in travelled.pipeline()] == [f.name for f, _ in c4_second.pipeline()]
    assert hash_json(c4_second.model_dump(mode="json")) != hash_json(FilterSettings().model_dump(mode="json"))
    with pytest.raises(ValueError, match="filters.order: names no place for"):
        FilterSettings.model_validate({"c4": {}, "order": ["gopher_quality"]})
