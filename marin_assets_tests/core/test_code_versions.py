"""Code versions from the static import closure: every import form counts, nothing else does."""

import dagster as dg
import pytest

from marin_assets.core import import_graph, locked_packages
from marin_assets.lineage.code_versions import code_version, covered_modules, versioned_modules

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "X = 1\n",
    "pkg/job.py": "from . import helper\nfrom pkg.sub import leaf\n\ndef run():\n    import pkg.lazy\n",
    "pkg/helper.py": "from .core import X\n",
    "pkg/lazy.py": "",
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": "from ..core import X\n",
    "pkg/unrelated.py": "import pkg.job\n",
}


@pytest.fixture
def package(tmp_path, monkeypatch):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.setattr(import_graph, "PACKAGE", "pkg")
    return tmp_path / "pkg"


def test_closure_follows_relative_submodule_and_function_imports(package):
    assert set(import_graph.closure(["pkg.job"], package)) == {
        "pkg", "pkg.job", "pkg.helper", "pkg.core", "pkg.lazy", "pkg.sub", "pkg.sub.leaf"}
    assert "pkg.unrelated" not in import_graph.closure(["pkg.job"], package)


def test_version_changes_with_any_module_in_the_closure_and_the_recipe(package):
    before = code_version({"a": 1}, "pkg.job", package_dir=package)
    assert code_version({"a": 2}, "pkg.job", package_dir=package) != before
    (package / "unrelated.py").write_text("import pkg.job\nY = 2\n")
    import_graph.import_graph.cache_clear()
    assert code_version({"a": 1}, "pkg.job", package_dir=package) == before
    (package / "sub" / "leaf.py").write_text("from ..core import X\nY = 2\n")
    assert code_version({"a": 1}, "pkg.job", package_dir=package) != before
    assert "pkg.sub.leaf" in covered_modules(code_version({"a": 1}, "pkg.job", package_dir=package))


def test_a_data_file_a_covered_module_names_is_part_of_the_version(package):
    (package / "rules.json").write_text('{"a": 1}')
    (package / "notes.txt").write_text("not named by any module")
    (package / "core.py").write_text('from pathlib import Path\nRULES = Path(__file__).with_name("rules.json")\n')
    import_graph.import_graph.cache_clear()
    before = code_version({}, "pkg.job", package_dir=package)
    (package / "notes.txt").write_text("edited, still named by no module")
    assert code_version({}, "pkg.job", package_dir=package) == before
    (package / "rules.json").write_text('{"a": 2}')
    assert code_version({}, "pkg.job", package_dir=package) != before


def test_third_party_and_empty_module_lists_are_refused(package):
    with pytest.raises(ValueError, match="lockfile"):
        versioned_modules("numpy", package_dir=package)
    with pytest.raises(ValueError, match="compute"):
        versioned_modules(package_dir=package)


def test_cycle_is_found():
    assert import_graph.find_cycle({"a": frozenset({"b"}), "b": frozenset({"a"})}) == ["a", "b", "a"]
    assert import_graph.find_cycle({"a": frozenset({"b"}), "b": frozenset()}) is None


def test_a_module_run_as_a_subprocess_and_its_imports_are_in_the_version(package):
    """`python -m pkg.worker` started by the job: the worker and what it imports version the job's asset."""
    (package / "worker.py").write_text("from pkg import wlib\n")
    (package / "wlib.py").write_text("Z = 1\n")
    (package / "job.py").write_text('import subprocess, sys\n\ndef run():\n'
                                    '    subprocess.run([sys.executable, "-m", "pkg.worker"])\n')
    import_graph.import_graph.cache_clear()
    assert {"pkg.worker", "pkg.wlib"} <= set(import_graph.closure(["pkg.job"], package))
    before = code_version({}, "pkg.job", package_dir=package)
    (package / "wlib.py").write_text("Z = 2\n")
    import_graph.import_graph.cache_clear()
    assert code_version({}, "pkg.job", package_dir=package) != before
    assert "pkg.worker" not in import_graph.import_graph(package)["pkg.job"]  # not an import: layering unchanged


def test_the_real_subprocess_entry_points_are_covered():
    from marin_assets_tests.stage_definitions import quality_classifier
    from marin_assets.train.run_folder import ENTRY_MODULE

    assert "marin_assets.data.curate.fasttext_train" in covered_modules(quality_classifier.code_versions_by_key[
        quality_classifier.key])
    assert ENTRY_MODULE in import_graph.closure(["marin_assets.train.run_folder"])


def test_training_code_does_not_version_an_external_suite_s_fits():
    """besiroglu2024/* fit a published table: the trainer's preflight, resources and models are not their code."""
    from marin_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    external = [k for k in graph.materializable_asset_keys if k.path[0] == "besiroglu2024"]
    assert len(external) == 4
    for key in external:
        modules = covered_modules(graph.get(key).code_version)
        assert modules, key
        assert not [m for m in modules if m.startswith("marin_assets.train")], (key, modules)
    suite_fit = covered_modules(graph.get(dg.AssetKey("parametric_fit")).code_version)
    assert "marin_assets.scaling.suite_observations" in suite_fit  # the suite's own fits read its runs with it


LOCK = """version = 1
[[package]]
name = "pyyaml"
version = "{yaml}"
dependencies = [{{ name = "zdep" }}]

[[package]]
name = "zdep"
version = "{zdep}"

[[package]]
name = "unrelated-pkg"
version = "{unrelated}"
"""


def test_locked_versions_of_the_imported_packages_and_their_dependencies_are_in_the_version(package, tmp_path):
    """An upgrade in uv.lock stales the code that imports the package (or one that depends on it), nothing else."""
    (package / "core.py").write_text("import yaml\nX = 1\n")
    import_graph.import_graph.cache_clear()
    lock = tmp_path / "uv.lock"

    def version(**pins):
        lock.write_text(LOCK.format(**{"yaml": "6.0", "zdep": "1.0", "unrelated": "1.0", **pins}))
        locked_packages._lock.cache_clear()
        return code_version({}, "pkg.job", package_dir=package, lock_file=lock)

    before = version()
    assert version(unrelated="2.0") == before
    assert version(yaml="6.1") != before
    assert version(zdep="1.1") != before  # a dependency of an imported package
    assert code_version({}, "pkg.unrelated", package_dir=package, lock_file=lock) != before  # sanity: other code


def test_the_real_stages_version_their_packages():
    from marin_assets.lineage.code_versions import versioned_modules

    files = import_graph.graph_files()

    def packages(*modules):
        names = set().union(*(locked_packages.third_party_imports(files[m], "marin_assets")
                              for m in versioned_modules(*modules)))
        return set(locked_packages.locked_versions(sorted(names)))

    assert {"maxtext", "jax", "flax"} <= packages("marin_assets.train.maxtext_entry")
    assert {"pyspark", "resiliparse", "py3langid"} <= packages("marin_assets.data.clean.cleaned_output")
    assert not {"maxtext", "pyspark"} & packages("marin_assets.scaling.external", "marin_assets.scaling.observations")
