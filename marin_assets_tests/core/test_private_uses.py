"""No private internals of the stdlib or a dependency outside marin_assets/fastpath/ (core/private_uses.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from marin_assets.core import private_uses
from marin_assets.core.import_graph import PACKAGE_DIR


def test_no_private_internals_outside_the_fast_path_folder():
    found = private_uses.violations()
    assert not found, "private internals outside marin_assets/fastpath/ (move them there, with a tripwire test):\n" + \
        "\n".join(found)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "marin_assets"
    for name, source in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


@pytest.mark.parametrize("source, what", [
    ("from re import _parser\n", "imports re._parser"),
    ("import re._constants\n", "imports re._constants"),
    ("from _sha1 import sha1\n", "imports from _sha1"),
    ("import argparse\n\ndef f(x: argparse._SubParsersAction): ...\n", "uses argparse._SubParsersAction"),
    ("from maxtext.common import gcloud_stub\ngetattr(gcloud_stub, '_stub', None)\n", "uses getattr(gcloud_stub"),
    ("def f(spark):\n    return spark._jvm\n", "uses spark._jvm"),
    ("def f(identifier):\n    return identifier._norm_probs\n", "uses identifier._norm_probs"),
    ("from maxtext.common import checkpointing\ncheckpointing.save = print\n", "monkey-patches checkpointing.save"),
    ("from jax.experimental import serialize_executable\n", "imports from jax.experimental"),
])
def test_each_kind_of_private_use_is_named_with_file_and_line(tmp_path, source, what):
    root = _package(tmp_path, {"data/bad.py": "import os\n" + source})
    found = private_uses.violations(root)
    assert len(found) == 1 and found[0].startswith("marin_assets/data/bad.py:") and what in found[0], found
    assert int(found[0].split(":")[1]) >= 2  # the line of the use, after the first line


def test_the_same_uses_inside_fastpath_and_the_projects_own_private_names_pass(tmp_path):
    root = _package(tmp_path, {
        "fastpath/words.py": "from re import _parser\ndef f(spark):\n    return spark._jvm\n",
        "data/own.py": ("import os, sys\nclass Table:\n    def __init__(self):\n        self._rows = []\n"
                        "def size(t):\n    return len(t._rows)\n"
                        "def stop():\n    sys.stdout = sys.stderr\n    os._exit(0)\n"),
    })
    assert private_uses.violations(root) == []


def test_every_private_use_in_fastpath_has_a_tripwire_test():
    """Each fast-path module that uses an internal is named by the tripwire tests."""
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    own = private_uses.defined_private_names(files)
    users = {p.stem for p in (PACKAGE_DIR / private_uses.FAST_PATH).rglob("*.py") if private_uses.file_uses(p, own)}
    tripwires = (Path(__file__).parents[1] / "fastpath" / "test_tripwires.py").read_text()
    assert users and not {u for u in users if u not in tripwires}, users
