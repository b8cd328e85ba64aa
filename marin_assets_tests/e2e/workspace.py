"""A throw-away copy of the platform's world: DAGSTER_HOME, storage root, recipes and sample data.

The sample corpus and recipes are copied so a test can edit a source file without touching the
repo; every command runs as a subprocess with this environment, exactly as a user would run it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from marin_assets.core.recipes import PACKAGE_RECIPES

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "marin_assets" / "sample_data"
VENV_BIN = Path(sys.executable).parent

# The main graph in the order a user (or CI) materializes it: one CLI call per stage, one partition.
SOURCES = ("python_docs", "debian_handbook", "debian_licenses", "dirty_web")
E2E_RUN = "tiny-sample"
STAGE_COMMANDS: tuple[tuple[str, str | None], ...] = (
    ("eval_set", "handbook_passages"),  # the 13-gram index decontamination reads
    ("task_set_decontamination", None),  # every task set's items, which decontamination reads too
    ("quality_classifier", None),  # the fastText model cleaning scores with
    ("raw_corpus,cleaned_documents,data_report", "dirty_web"),  # every filter, dedup and the quarantine at work
    ("tokenizer", None),
    ("tokenized_source", "dirty_web"),
    ("mixture", "sample"),
    ("training_plan,training_run", E2E_RUN),
)
GRAPH_KEYS = ",".join(key for select, _ in STAGE_COMMANDS for key in select.split(","))


@dataclass
class Workspace:
    root: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def storage_root(self) -> Path:
        return self.root / "storage"

    @property
    def data_dir(self) -> Path:
        return self.root / "sample_data"

    @property
    def recipes_dir(self) -> Path:
        return self.root / "recipes"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DAGSTER_HOME=str(self.root / "dagster_home"),
            MARIN_STORAGE_ROOT=str(self.storage_root),
            MARIN_RECIPES_DIR=str(self.recipes_dir),
            MARIN_DATA_ROOTS=str(self.data_dir),
            PATH=f"{VENV_BIN}:{env.get('PATH', '')}",
        )
        return env

    def run(self, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
        # timeout: a hang guard; the whole-graph build took over 900 s beside a second worker on a loaded machine
        started = time.monotonic()
        proc = subprocess.run(list(args), env=self.env(), cwd=REPO, capture_output=True, text=True, timeout=timeout)
        self.timings[" ".join(args)] = time.monotonic() - started
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
        return proc

    def materialize(self, select: str, partition: str | None) -> subprocess.CompletedProcess:
        # The README's command: `dg launch` (dagster-dg-cli, [tool.dg] in pyproject.toml), not the deprecated one.
        args = ["dg", "launch", "--assets", select]
        return self.run(*args, *(["--partition", partition] if partition else []))

    def materialize_stage_by_stage(self) -> None:
        for select, partition in STAGE_COMMANDS:
            self.materialize(select, partition)


def make_workspace(root: Path) -> Workspace:
    ws = Workspace(root)
    (root / "dagster_home").mkdir(parents=True)
    shutil.copy(REPO / "deployments" / "local" / "dagster.yaml", root / "dagster_home" / "dagster.yaml")
    shutil.copytree(SAMPLE_DATA, ws.data_dir)
    shutil.copytree(PACKAGE_RECIPES, ws.recipes_dir)
    registry = yaml.safe_load((ws.recipes_dir / "sources.yaml").read_text())
    for source in registry["sources"]:
        source["uri"] = str(ws.data_dir / source["uri"].split("sample_data/", 1)[1])
    (ws.recipes_dir / "sources.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))
    # One training run keeps the end-to-end graph small: every partition of it is then built.
    runs_path = ws.recipes_dir / "training" / "runs.yaml"
    runs = yaml.safe_load(runs_path.read_text())
    runs["runs"] = {E2E_RUN: runs["runs"][E2E_RUN]}
    runs_path.write_text(yaml.safe_dump(runs, sort_keys=False))
    return ws


def refresh_checksum(ws: Workspace, source: str) -> None:
    """What a user does after editing a source on purpose: record its new checksum in the registry."""
    from marin_assets.data.sources.source_inventory import source_inventory
    from marin_assets.data.sources.source_registry import SourceSpec

    path = ws.recipes_dir / "sources.yaml"
    registry = yaml.safe_load(path.read_text())
    for entry in registry["sources"]:
        if entry["name"] == source:
            entry["provenance"]["checksum"] = source_inventory(SourceSpec.model_validate(entry))["content_hash"]
    path.write_text(yaml.safe_dump(registry, sort_keys=False))
