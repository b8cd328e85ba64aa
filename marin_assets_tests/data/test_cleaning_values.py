"""The cleaning job carries its recipe's values to the driver and the workers: an edit of the YAML on disk
after planning changes nothing the job applies, and a value changed on the way is refused, naming it."""

import dataclasses
import json
import pickle
import shutil

import pytest
import yaml

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.core.storage import Storage
from marin_assets.data.clean.cleaned_output import planned_job, write_cleaned
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, RecordCleaner, record_tuple
from marin_assets.data.clean.cleaning_values import CleaningValues, ValueSkew
from marin_assets.data.curate.eval_sets import load_eval_sets
from marin_assets.data.formats.readers import list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources


@pytest.fixture
def recipes(tmp_path, monkeypatch):
    """A copy of the shipped recipes that load_cleaning_recipe() reads (sources resolved from the shipped ones)."""
    copy = tmp_path / "recipes"
    shutil.copytree(PACKAGE_RECIPES, copy)
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(copy))
    return copy


def _job(tmp_path, source: str = "dirty_web", peers: tuple[str, ...] = ()):
    sources = load_sources(PACKAGE_RECIPES / "sources.yaml")
    return planned_job(Storage(str(tmp_path / "store")), source, list(peers), str(tmp_path / "out"),
                       load_cleaning_recipe(), sources, load_eval_sets(PACKAGE_RECIPES / "eval_sets.yaml").names)


def _statuses(cleaner: RecordCleaner, source: str = "dirty_web") -> list[tuple[str, str]]:
    spec = load_sources(PACKAGE_RECIPES / "sources.yaml").get(source)
    records = [dict(zip(RECORD_COLUMNS, record_tuple(rec, f.rsplit("/", 1)[-1]), strict=True))
               for f in list_source_files(spec) for rec in read_file(f, spec)]
    return [(row["status"], row["reason"]) for row in cleaner.clean_many(records)]


def test_the_workers_apply_the_planned_values_whatever_the_yaml_on_disk_says_later(tmp_path, recipes):
    job = _job(tmp_path)
    planned = _statuses(RecordCleaner(*_recipe_and_source(job)))
    cleaning = recipes / "cleaning.yaml"
    cleaning.write_text(cleaning.read_text().replace("min_doc_words: 50", "min_doc_words: 5000", 1))
    edited = _statuses(RecordCleaner(load_cleaning_recipe(), "dirty_web"))
    assert edited != planned  # the edit matters to a cleaner that reads the disk...
    # ...but not to the job's: the driver's models come from the values, and a worker gets the cleaner pickled
    worker_side = pickle.loads(pickle.dumps(RecordCleaner(*_recipe_and_source(job))))
    assert _statuses(worker_side) == planned
    cleaning.write_text("filters: [not, a, mapping")  # not even YAML any more: nothing reads it
    assert job.values.checked()[0] == CleaningValues.from_json(job.values.to_json()).checked()[0]


def _recipe_and_source(job):
    recipe, specs = job.values.checked()
    return recipe, specs[0].name


@pytest.mark.parametrize("field, change", [
    ("recipe.dedup", lambda v: {**v, "recipe": {**v["recipe"], "dedup": {**v["recipe"]["dedup"], "seed": 2}}}),
    ("recipe.filters", lambda v: {**v, "recipe": {**v["recipe"], "filters": {}}}),
    ("sources.dirty_web", lambda v: {**v, "specs": [{**v["specs"][0], "uri": "/elsewhere/*.jsonl"}]}),
    ("eval_sets", lambda v: {**v, "eval_sets": []}),
])
def test_a_value_that_no_longer_hashes_to_the_recorded_hash_is_refused_naming_the_field(tmp_path, field, change):
    job = _job(tmp_path)
    sent = change(json.loads(job.values.to_json()))  # what reached the driver (e.g. Dataproc's --values)
    tampered = dataclasses.replace(job, values=CleaningValues.from_json(json.dumps(sent)))
    with pytest.raises(ValueSkew, match=rf"\['{field}'\] no longer hash"):
        tampered.values.checked()
    with pytest.raises(ValueSkew, match=field):  # before any Spark work: no session is needed to refuse
        write_cleaned(None, tampered)
    assert job.values.checked()  # the untouched values pass


def test_the_recorded_whole_recipe_hash_is_the_provenance_manifests(tmp_path):
    from marin_assets.lineage.provenance import build_manifest

    job = _job(tmp_path)
    recipe = job.values.checked()[0]
    manifest = build_manifest(asset="cleaned_documents", partition="dirty_web", recipe=recipe, code_version="c",
                              inputs={}, input_uris={}, output_uri="u", output_hash="h")  # fmt: skip
    assert job.values.recipe_hash == manifest["recipe_hash"]


def test_the_specs_must_be_the_source_then_its_peers(tmp_path):
    job = _job(tmp_path, peers=("python_docs",))
    with pytest.raises(ValueError, match=r"specs \['dirty_web', 'python_docs'\] are not its source then its peers"):
        write_cleaned(None, dataclasses.replace(job, peers=["debian_licenses"]))


def test_values_that_hash_right_but_do_not_validate_are_refused_naming_the_field(tmp_path):
    """Hashes recomputed on the way (the values and their record changed together) still meet the models."""
    from marin_assets.core.recipes import RecipeError
    from marin_assets.data.clean.cleaning_values import field_hashes

    values = _job(tmp_path).values
    recipe = {**values.recipe, "dedup": {**values.recipe["dedup"], "scope": "everywhere"}}
    hashes = field_hashes(recipe, values.specs, values.eval_sets)
    forged = CleaningValues(recipe, values.specs, values.eval_sets, hashes)
    with pytest.raises(RecipeError, match=r"dedup\.scope"):
        forged.checked()


@pytest.mark.slow
def test_a_spark_job_planned_before_its_recipes_were_broken_on_disk_cleans_with_the_planned_values(
        spark, tmp_path, recipes):  # fmt: skip
    """The driver, in this process, would fail on the garbage if it read a recipe (the workers get the cleaner
    pickled: the test above; their environment is the Spark session's, fixed when it started)."""
    cleaning = recipes / "cleaning.yaml"
    shipped = yaml.safe_load(cleaning.read_text())  # decontamination and quality scoring read committed assets
    shipped["decontamination"]["enabled"] = shipped["quality"]["score"] = False  # this test has not made
    cleaning.write_text(yaml.safe_dump(shipped))
    job = _job(tmp_path)
    expected = job.values.checked()[0]
    assert not expected.decontamination.enabled and not expected.quality.score
    for name in ("cleaning.yaml", "sources.yaml", "eval_sets.yaml"):
        (recipes / name).write_text("{not yaml")
    stats = write_cleaned(spark, job)
    assert stats["records_in"] == 49 and stats["conserved"] and stats["kept"] > 0
