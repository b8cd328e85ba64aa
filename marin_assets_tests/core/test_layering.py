"""The import rules hold for the package, and each rule catches the break it is written for.

The rules and the module kinds (pure / dagster / wiring) are in marin_assets/core/layering.py.
"""

import shutil

import pytest

from marin_assets.core import import_graph, layering


def test_the_package_breaks_no_import_rule():
    assert layering.violations() == []


def test_the_old_layering_breaks_are_gone():
    graph = import_graph.import_graph()
    assert "marin_assets.defs.train.training_assets" not in graph["marin_assets.scaling.outputs"]
    assert "marin_assets.materialize_all" not in graph["marin_assets.defs.train.training_assets"]
    assert "marin_assets.train.local_launcher" not in graph["marin_assets.train.k8s.training"]
    assert not any(layering.stage_of(d) == "governance" for m, deps in graph.items()
                   if layering.stage_of(m) == "data" for d in deps)


def test_module_kinds_come_from_the_source():
    assert layering.module_kind("marin_assets.data.clean.cleaning_job") == "pure"
    assert layering.module_kind("marin_assets.train.local_launcher") == "dagster"
    assert layering.module_kind("marin_assets.defs.data.clean_assets") == "wiring"
    assert layering.module_kind("marin_assets.train.k8s.pod_pipes") == "pure"  # dagster_pipes is not Dagster


BREAKS = {
    "another stage's wiring": ("scaling/outputs.py", "from marin_assets.defs.train.training_assets import build_training_assets",
                               "another stage's Dagster wiring"),
    "pure imports dagster": ("data/extract/extractor_choice.py", "import dagster", "pure modules import no Dagster"),
    "core imports a stage": ("core/hashing.py", "from marin_assets.data import sources", "core imports only core"),
    "a stage imports the top": ("defs/train/training_assets.py", "from marin_assets import materialize_all",
                                "the orchestration layer on top"),
    "module cycle": ("data/sources/source_registry.py", "from marin_assets.data.clean import cleaning_job", "import cycle"),
    "stage cycle": ("data/sources/source_registry.py", "from marin_assets.governance import audit", "stages import each other"),
    "definitions outside defs/": ("train/launchers.py", "@dg.asset\ndef stray():\n    pass",
                                  "declares Dagster definitions outside defs/"),
    "lazy import in a function": ("data/dedup/dedup_keys.py", "def _late():\n    import dagster", "pure modules import no Dagster"),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_rule_catches_its_break(tmp_path, name):
    file, line, message = BREAKS[name]
    copy = tmp_path / "marin_assets"
    shutil.copytree(import_graph.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", "sample_data"))
    path = copy / file
    path.write_text(path.read_text() + "\n" + line + "\n")
    found = layering.violations(copy)
    assert any(message in v for v in found), found
