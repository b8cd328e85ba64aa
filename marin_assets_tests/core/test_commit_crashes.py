"""A crash between any two steps of a commit leaves the old or the new output whole (local disk and GCS)."""

import os

import pytest

from marin_assets.core.commit import COMMIT_MARKER, version_name
from marin_assets.core.storage import Storage, staging_name
from marin_assets.governance.leftovers import find_leftovers, remove_leftovers
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (the fixture)

OLD = {"a.txt": "old a", "sub/b.txt": "old b"}
NEW = {"a.txt": "new a", "c.txt": "new c"}


def _write(storage: Storage, base: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        storage.fs.makedirs(f"{base}/{rel}".rsplit("/", 1)[0], exist_ok=True)
        with storage.fs.open(f"{base}/{rel}", "w") as f:
            f.write(text)


def _commit(storage: Storage, files: dict[str, str]) -> None:
    with storage.atomic_dir("stage", "out") as staged:
        _write(storage, staged.path, files)


def _visible(storage: Storage) -> dict[str, str] | None:
    """What a fresh reader sees: the committed output's files, or None when nothing is committed."""
    reader = Storage(storage.root_uri)
    if not reader.is_committed("stage", "out"):
        return None
    base = reader.require_committed("stage", "out")
    return {rel: reader.fs.cat_file(f"{base}/{rel}").decode() for rel in reader.list_files("stage", "out")}


def _crash_after(storage: Storage, done: int, partial_write: bool = False) -> None:
    """Stage NEW as atomic_dir does, run the commit's first `done` steps, then stop as a crash would."""
    final = storage.uri("stage", "out")
    staging = staging_name(final) if storage.is_local else version_name(final)
    storage.fs.makedirs(staging, exist_ok=True)
    if partial_write:
        _write(storage, staging, {"a.txt": "new a"})  # the crash hit while the files were written
        return
    _write(storage, staging, NEW)
    for step in storage.commit_steps(staging, final)[:done]:
        step.run()


def _check_every_crash_point(make_storage) -> None:
    n_steps = len(make_storage().commit_steps("s", "f"))
    seen = []
    for done in [-1, *range(n_steps + 1)]:
        storage = make_storage()
        _commit(storage, OLD)
        _crash_after(storage, max(done, 0), partial_write=done < 0)
        visible = _visible(storage)
        assert visible in (OLD, NEW), f"after {done} step(s) a reader sees {visible}"
        seen.append(visible == NEW)
        # gc removes only set-asides: the committed output survives it, and a later commit works.
        remove_leftovers(storage, find_leftovers(storage, retention_hours=0))
        assert _visible(storage) == visible, f"gc after {done} step(s) changed the committed output"
        _commit(storage, {"z.txt": "again"})
        assert _visible(storage) == {"z.txt": "again"}
        assert find_leftovers(storage, retention_hours=0) == []
    assert seen[0] is False and seen[-1] is True  # the crash points span both outcomes


def test_local_commit_survives_a_crash_between_every_step(tmp_path):
    roots = iter(range(100))
    _check_every_crash_point(lambda: Storage(str(tmp_path / f"r{next(roots)}")))


def test_local_commit_swaps_in_place_without_a_gap(tmp_path):
    storage = Storage(str(tmp_path))
    _commit(storage, OLD)
    _commit(storage, NEW)
    assert _visible(storage) == NEW
    assert sorted(os.listdir(tmp_path / "stage")) == ["out"]  # the old version is gone, no set-aside left


def test_gcs_commit_survives_a_crash_between_every_step(gcs_emulator):  # noqa: F811
    _check_every_crash_point(lambda: Storage(gcs_emulator.root()))


def test_gcs_commit_writes_a_version_and_a_pointer(gcs_emulator):  # noqa: F811
    storage = Storage(gcs_emulator.root())
    _commit(storage, OLD)
    _commit(storage, NEW)
    pointer = storage.fs.cat_file(storage.uri("stage", "out", COMMIT_MARKER)).decode()
    assert ".v-" in pointer
    assert storage.require_committed("stage", "out").startswith(storage.uri("stage", "out.v-"))
    assert _visible(storage) == NEW
    # only the current version is left next to the pointer
    names = sorted(p.rsplit("/", 1)[-1] for p in storage.fs.ls(storage.uri("stage")))
    assert len(names) == 2 and names[0] == "out" and names[1].startswith("out.v-")


def test_gcs_reader_follows_a_pre_pointer_commit_and_replaces_it(gcs_emulator):  # noqa: F811
    storage = Storage(gcs_emulator.root())
    final = storage.uri("stage", "out")
    _write(storage, final, OLD)  # the layout the copy-then-mark commit left behind
    with storage.fs.open(f"{final}/{COMMIT_MARKER}", "w") as f:
        f.write("ok\n")
    assert _visible(storage) == OLD
    _commit(storage, NEW)
    assert _visible(storage) == NEW
    assert storage.fs.find(final) == [f"{final}/{COMMIT_MARKER}".split("://", 1)[1]]


def test_a_corrupt_pointer_is_named(gcs_emulator):  # noqa: F811
    storage = Storage(gcs_emulator.root())
    with storage.fs.open(storage.uri("stage", "out", COMMIT_MARKER), "w") as f:
        f.write('{"version": "../elsewhere"}')
    with pytest.raises(ValueError, match="not a valid commit pointer"):
        storage.require_committed("stage", "out")


def test_a_manifest_recorded_uri_is_followed_to_its_version(gcs_emulator):  # noqa: F811
    """Manifests record an output's URI; its files (manifest included) live under the version the pointer names."""
    storage = Storage(gcs_emulator.root())
    with storage.atomic_dir("stage", "out") as staged:
        staged.write_json({"licenses": {"python_docs": "PSF-2.0"}}, "_provenance.json")
    final = storage.uri("stage", "out")
    assert storage.follow(final) == storage.require_committed("stage", "out") != final
    from marin_assets.data.sources.licenses import sources_behind

    assert sources_behind(storage, [final]) == ["python_docs"]


def test_a_filesystem_without_rename_exchange_still_commits(tmp_path, monkeypatch):
    import errno

    from marin_assets.core import commit

    def unsupported(a, b):
        raise OSError(errno.EINVAL, "Invalid argument", a)

    monkeypatch.setattr(commit, "exchange", unsupported)  # what renameat2 answers on such a filesystem
    storage = Storage(str(tmp_path))
    _commit(storage, OLD)
    _commit(storage, NEW)
    assert _visible(storage) == NEW
    assert sorted(os.listdir(tmp_path / "stage")) == ["out"]
