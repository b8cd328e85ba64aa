"""Source URIs must resolve into the configured data roots; traversal is refused with a clear error."""

import os

import pytest

from marin_assets.data.sources.source_roots import (
    SAMPLE_DATA,
    SourceOutsideRootsError,
    allowed_roots,
    check_source_uri,
    env_roots,
    normalize,
    require_files_within,
)
from marin_assets.data.sources.source_registry import load_sources
from marin_assets_tests.data.registry_fixture import source_entry, write_registry  # noqa: F401 (fixture)


def test_shipped_registry_loads_inside_the_sample_data_root():
    registry = load_sources()
    assert registry.sources and all(s.uri.startswith(str(SAMPLE_DATA) + "/") for s in registry.sources)
    assert registry.allowed_roots[0] == str(SAMPLE_DATA)  # the effective roots, for checking matched files


@pytest.mark.parametrize(
    "uri",
    [
        "../../etc/passwd",                       # relative to the registry file
        "../sample_data/../../../../etc/*",       # starts inside, climbs out
        "/etc/passwd",
        "file:///etc/shadow",
    ],
)
def test_traversal_out_of_the_roots_is_refused_naming_source_uri_and_roots(uri, tmp_path, monkeypatch):
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))
    monkeypatch.delenv("MARIN_DATA_ROOTS", raising=False)
    (recipes / "sources.yaml").write_text(
        f"sources:\n  - {{name: evil, uri: '{uri}', format: jsonl, license: CC0-1.0}}\n"
    )
    load_sources.cache_clear()
    try:
        with pytest.raises(SourceOutsideRootsError) as err:
            load_sources()
    finally:
        load_sources.cache_clear()
    message = str(err.value)
    assert "source 'evil'" in message and repr(uri) in message
    assert str(SAMPLE_DATA) in message and "MARIN_DATA_ROOTS" in message
    assert str(recipes / "sources.yaml") in message


def test_a_symlink_inside_a_root_pointing_outside_is_refused(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "escape").symlink_to("/etc")
    with pytest.raises(SourceOutsideRootsError, match=r"resolves to '/etc/passwd'"):
        check_source_uri("linked", str(root / "escape" / "passwd"), allowed_roots([str(root)]))


def test_sibling_folder_with_a_common_prefix_is_not_inside(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data-private").mkdir()
    with pytest.raises(SourceOutsideRootsError):
        check_source_uri("s", str(tmp_path / "data-private" / "x.jsonl"), allowed_roots([str(tmp_path / "data")]))
    check_source_uri("s", str(tmp_path / "data" / "sub" / "*.jsonl"), allowed_roots([str(tmp_path / "data")]))


def test_gcs_prefixes_are_compared_after_collapsing_dot_dot(monkeypatch):
    monkeypatch.setenv("MARIN_DATA_ROOTS", "gs://corpora/raw:/srv/data")
    assert env_roots() == ["gs://corpora/raw", "/srv/data"]
    roots = allowed_roots(None)
    assert roots == [str(SAMPLE_DATA), "gs://corpora/raw", os.path.realpath("/srv/data")]
    check_source_uri("web", "gs://corpora/raw/web/*.jsonl.gz", roots)
    for uri in ("gs://corpora/raw/../private/x.jsonl", "gs://corpora/rawer/x.jsonl", "s3://corpora/raw/x"):
        with pytest.raises(SourceOutsideRootsError, match="outside the allowed roots"):
            check_source_uri("web", uri, roots)
    assert normalize("gs://corpora/raw/a/../../private") == "gs://corpora/private"


def test_marin_data_roots_admits_a_registry_entry_outside_the_sample_data(tmp_path, monkeypatch, write_registry):
    outside = tmp_path.parent / f"{tmp_path.name}-corpus"
    outside.mkdir()
    (outside / "a.jsonl").write_text('{"text": "x"}\n')
    write_registry([source_entry("dirty_web", str(outside / "*.jsonl"))])
    with pytest.raises(SourceOutsideRootsError):
        load_sources()
    monkeypatch.setenv("MARIN_DATA_ROOTS", str(outside))
    load_sources.cache_clear()
    assert load_sources().get("dirty_web").uri == str(outside / "*.jsonl")


def test_a_glob_matching_through_a_symlinked_folder_is_caught_on_its_files(tmp_path):
    root = tmp_path / "data"
    (root / "ok").mkdir(parents=True)
    (root / "ok" / "a.jsonl").write_text("{}\n")
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.jsonl").write_text("{}\n")
    (root / "linked").symlink_to(outside)
    roots = allowed_roots([str(root)])
    check_source_uri("globbed", str(root / "*" / "*.jsonl"), roots)  # the pattern itself is inside
    files = sorted(str(p) for p in root.glob("*/*.jsonl"))
    with pytest.raises(SourceOutsideRootsError, match=r"1 matched file\(s\) .* -> '.*/private/secret.jsonl'"):
        require_files_within("globbed", files, roots)
    inside = [f for f in files if "/ok/" in f]
    assert require_files_within("globbed", inside, roots) == inside
