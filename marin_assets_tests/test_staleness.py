"""Editing code or a recipe stales exactly the assets that run it, as a user sees it in Dagster.

A copy of the package is edited one function at a time (staleness_probe.py, one fresh interpreter
for all edits); after each edit Dagster's own resolver says which asset partitions are stale, and
stale_status (what `marin materialize-all` plans with) must say the same.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import marin_assets

PACKAGE = Path(marin_assets.__file__).parent
PROBE = Path(__file__).parent / "staleness_probe.py"

CLEAN = {"cleaned_documents"}
# quality_classifier trains on the reference sources' extracted, normalised text: it reads them
# through the same readers, formats and extractors.
READ = {*CLEAN, "quality_classifier"}
# a format's class holds its suffixes beside its reader, and raw_corpus lists a source's files by suffix
FORMATS = {"raw_corpus", *READ}
EXTERNAL_FITS = {"besiroglu2024/isoflop_fit", "besiroglu2024/parametric_fit", "besiroglu2024/scaling_predictions"}
FITS = {"isoflop_fit", "parametric_fit", "scaling_predictions", "heldout_prediction", *EXTERNAL_FITS}
TRAINED = {"training_run", "scaling_run", "heldout_run"}
# what runs the trainer: the runs, the plan's opt-in profiling run and the suite's profiling runs
RUNS_TRAINER = {"training_plan", "scaling_profile", *TRAINED}
# every asset that refuses an uncleared source (one compliance decision): the runs, the evaluations, the audit
GATED = {*RUNS_TRAINER, "downstream_eval", "scaling_downstream_eval", "heldout_downstream_eval", "audit_report"}
# (file under marin_assets/, function edited) -> the assets that must go stale, and only those.
MODULE_EDITS = {
    # listing a source's files (with the format classes' suffixes): what reads raw files, not what only
    # checks a source's committed compliance verdict (the gated trainers read the inventory, never list)
    ("data/sources/source_files.py", "list_source_files"): {"raw_corpus", *READ},
    # the inventory is computed by raw_corpus alone; everything else reads the committed inventory.json
    ("data/sources/source_inventory.py", "source_inventory"): {"raw_corpus"},
    ("data/formats/readers.py", "read_file"): FORMATS,
    ("data/formats/jsonl.py", "read_jsonl"): FORMATS,
    ("data/formats/parquet.py", "read_parquet"): FORMATS,
    ("data/formats/warc.py", "read_warc"): FORMATS,
    ("data/formats/html_dir.py", "read_html_file"): FORMATS,
    ("data/formats/html.py", "decode_html"): FORMATS,
    ("data/extract/extractor_choice.py", None): READ,
    ("data/clean/language_id.py", None): CLEAN,
    ("data/clean/filters/c4.py", None): CLEAN,
    ("data/clean/filters/fineweb.py", None): CLEAN,
    ("data/clean/filters/gopher_quality.py", None): CLEAN,
    ("data/clean/filters/gopher_repetition.py", None): CLEAN,
    ("data/clean/filters/text.py", None): CLEAN,
    ("data/clean/filters/pipeline.py", None): CLEAN,
    ("data/dedup/dedup_keys.py", None): {*CLEAN, "data_report"},  # the report recounts clusters
    ("data/clean/normalize.py", None): {*READ, "data_report"},
    ("data/clean/cleaning_rows.py", None): CLEAN,
    ("data/clean/cleaning_job.py", "clean_source"): CLEAN,
    ("tokenize/tokenizer_files.py", None): {"tokenizer", "tokenized_source", "mixture"},
    # the tokenizer trains on the documents tokenize_job reads (it was missing from the hand-listed version)
    ("tokenize/encoding.py", None): {"tokenizer", "tokenized_source", "mixture"},
    ("tokenize/tokenize_job.py", None): {"tokenizer", "tokenized_source", "mixture"},
    ("tokenize/mixture_plan.py", None): {"mixture"},
    ("tokenize/mixture_build.py", None): {"mixture"},
    ("train/maxtext_entry.py", None): RUNS_TRAINER,
    ("train/run_result.py", None): RUNS_TRAINER,
    ("train/eval_set_texts.py", None): RUNS_TRAINER,  # how eval sets are tokenized decides their bpb
    ("train/maxtext_config.py", None): RUNS_TRAINER,
    # active parameters (N) of the suite's runs come from preflight (scaling.suite): what reads the suite's
    # runs (fits, predictions, evaluations of its checkpoints) goes stale; the external table's fits do not
    ("train/preflight.py", None): {*RUNS_TRAINER, "scaling_plan", "isoflop_fit", "parametric_fit",
                                   "scaling_predictions", "heldout_prediction", "scaling_downstream_eval",
                                   "heldout_downstream_eval"},
    # Fitters version the fits only: editing one never retrains a run (scaling_run, heldout_run).
    ("scaling/parametric.py", None): FITS,
    # Unrelated to any output: wiring, launch orchestration, governance.
    ("defs/data/clean_assets.py", "table_rows"): set(),
    ("train/local_launcher.py", "set_aside"): set(),
    ("defs/train/training_assets.py", "run_spec_version"): set(),
    ("governance/audit.py", None): {"audit_report"},
    # raw_corpus records the fingerprint the sensor compares with: a new fingerprint format re-records it
    ("data/sources/watch.py", None): {"raw_corpus"},
}
RECIPE_EDITS = {
    # One run's entry changes: that run's partitions only, not the other runs in the file.
    "one_training_run": ("recipes/training/runs.yaml", "    log_period: 5\n", "    log_period: 6\n",
                         {"training_plan[tiny-sample]", "training_run[tiny-sample]"}),
}


def _first_function(path: Path) -> str:
    import ast

    return next(n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef))


def _edit_id(file: str, function: str | None) -> str:
    return f"{file}:{function or 'first'}"


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    root = tmp_path_factory.mktemp("copy")
    shutil.copytree(PACKAGE, root / "marin_assets", ignore=shutil.ignore_patterns("__pycache__"))
    edits = [{"id": _edit_id(f, fn), "file": f, "function": fn or _first_function(root / "marin_assets" / f)}
             for f, fn in MODULE_EDITS]
    edits = [{**e, "file": f"marin_assets/{e['file']}"} for e in edits]
    edits += [{"id": name, "file": f"marin_assets/{f}", "old": old, "new": new}
              for name, (f, old, new, _) in RECIPE_EDITS.items()]
    (root / "edits.json").write_text(json.dumps(edits))
    env = {k: v for k, v in os.environ.items() if k not in ("MARIN_RECIPES_DIR", "PYTHONPATH")}
    proc = subprocess.run([sys.executable, "-P", "-W", "ignore", str(PROBE), str(root), str(root / "edits.json"),
                           str(root / "out.json")], env={**env, "PYTHONDONTWRITEBYTECODE": "1"},
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((root / "out.json").read_text())


@pytest.mark.slow
def test_unedited_copy_is_fresh(probed):
    assert probed["baseline"] == [[], []]


@pytest.mark.slow
@pytest.mark.parametrize(("file", "function"), sorted(MODULE_EDITS, key=str), ids=lambda v: v or "first")
def test_editing_a_module_stales_exactly_the_assets_that_run_it(probed, file, function):
    dagster_stale, ours = probed[_edit_id(file, function)]
    assert {label.split("[")[0] for label in dagster_stale} == MODULE_EDITS[(file, function)]
    assert ours == dagster_stale  # materialize-all plans exactly what the UI shows stale


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECIPE_EDITS))
def test_editing_one_run_stales_only_that_run(probed, name):
    dagster_stale, ours = probed[name]
    assert set(dagster_stale) == RECIPE_EDITS[name][3]
    assert ours == dagster_stale
