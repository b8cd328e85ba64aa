"""The suite's file order for the xdist workers: longest files first, the rest as collected."""

from pathlib import Path

from marin_assets_tests.file_durations import FILE_SECONDS, longest_files_first

REPO = Path(__file__).resolve().parents[1]


def test_listed_files_come_first_longest_first_and_each_file_stays_together_in_order():
    nodeids = ["a.py::t1", "b.py::t1", "c.py::t1", "a.py::t2", "d.py::t1", "c.py::t2"]
    ordered = longest_files_first(nodeids, {"c.py": 50, "d.py": 90})
    assert ordered == ["d.py::t1", "c.py::t1", "c.py::t2", "a.py::t1", "a.py::t2", "b.py::t1"]


def test_every_listed_file_exists():
    # a renamed file would silently lose its place at the front
    assert [path for path in FILE_SECONDS if not (REPO / path).is_file()] == []
