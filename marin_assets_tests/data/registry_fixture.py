"""A temporary recipes folder (sources.yaml + compliance.yaml + cleaning.yaml) that load_sources() reads.

Source names must be partitions of the sources' partitions the tests' assets were built with (once, when
marin_assets_tests.stage_definitions is imported), so tests reuse the shipped names and point them at their
own files.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from marin_assets.core.recipes import PACKAGE_RECIPES
from marin_assets.data.sources.source_registry import load_sources

WriteRegistry = Callable[..., Path]


def source_entry(name: str, uri: str, fmt: str = "jsonl", license: str = "CC0-1.0", **provenance) -> dict:
    return {
        "name": name,
        "uri": uri,
        "format": fmt,
        "license": license,
        "provenance": {"origin": "test", "version": "1", **provenance},
    }


@pytest.fixture
def write_registry(tmp_path, monkeypatch) -> Iterator[WriteRegistry]:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    shutil.copy(PACKAGE_RECIPES / "compliance.yaml", recipes / "compliance.yaml")
    shutil.copy(PACKAGE_RECIPES / "cleaning.yaml", recipes / "cleaning.yaml")  # the sensor reads its dedup scope
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(recipes))

    def write(sources: list[dict], extra_roots: tuple[str, ...] = ()) -> Path:
        """Sources may live anywhere under tmp_path (their allowed root) or under `extra_roots`."""
        registry = {"allowed_roots": [str(tmp_path), *extra_roots], "sources": sources}
        (recipes / "sources.yaml").write_text(yaml.safe_dump(registry))
        load_sources.cache_clear()
        return recipes

    yield write
    load_sources.cache_clear()
