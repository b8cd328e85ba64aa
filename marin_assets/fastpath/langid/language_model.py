"""py3langid's model, decoded once per machine and memory-mapped by every process after that.

py3langid ships its model LZMA-compressed (4.5 MB). Loading it decompresses ~68 MB of arrays into
the process's own fresh memory: ~0.8 s. Every Spark Python worker loads it, in every session. On a
VM that hands freed memory back to its host (virtio-balloon page reporting), touching fresh memory
costs as much again in page faults. Here the decoded arrays are written once as .npy files in a
cache folder named by the model file's hash. Each process maps them read-only: the pages come from
the page cache, and all workers share them.

The identifier built from the mapped arrays is py3langid's own LanguageIdentifier class, with the
same arrays (memoryviews where py3langid reads one element at a time), so it gives the same answers.
The batch scorer's float32 copy of the feature table is kept beside them (float32_table), mapped too.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from marin_assets.core.hashing import sha256_bytes

CACHE_ENV = "MARIN_LANGID_CACHE_DIR"
_ARRAYS = ("ptc", "pc", "nextmove", "row", "output")
# The batch scorer's float32 copy of ptc is written with the others; folders written before it are
# not reused (their name lacks this suffix).
_LAYOUT = "f32"


def cache_dir() -> Path:
    """MARIN_LANGID_CACHE_DIR, else ~/.cache/marin_assets/langid."""
    folder = os.environ.get(CACHE_ENV, "")
    return Path(folder) if folder else Path.home() / ".cache" / "marin_assets" / "langid"


def model_path() -> Path:
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def mapped_identifier(norm_probs: bool = True):
    """py3langid's LanguageIdentifier over the memory-mapped arrays of its shipped model.

    Falls back to py3langid's own loading when the cache folder cannot be written.
    """
    from py3langid.langid import LanguageIdentifier

    try:
        folder = decoded_model(model_path())
    except OSError:  # read-only or full disk: decode in memory, as py3langid does
        return LanguageIdentifier.from_model_file(model_path(), norm_probs=norm_probs)
    arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r").view(np.ndarray) for name in _ARRAYS}
    classes = json.loads((folder / "classes.json").read_text())
    # py3langid's walk reads one element at a time: memoryviews give it plain ints, as its arrays do
    return LanguageIdentifier(arrays["ptc"], arrays["pc"], classes, memoryview(arrays["nextmove"]),
                              memoryview(arrays["output"]), norm_probs=norm_probs,
                              tk_row=memoryview(arrays["row"]))  # fmt: skip


def float32_table() -> np.ndarray | None:
    """The shipped model's feature table (ptc) as float32, the values py3langid's product casts it to:
    mapped from the cache folder (converted with the rest, once per machine). None when the folder
    cannot be written."""
    try:
        return np.load(decoded_model(model_path()) / "ptc_float32.npy", mmap_mode="r").view(np.ndarray)
    except OSError:
        return None


def decoded_model(path: Path) -> Path:
    """The folder of `path`'s decoded arrays, written on first use (whole, or not at all)."""
    folder = cache_dir() / f"model-{sha256_bytes(path.read_bytes())[:16]}-{_LAYOUT}"
    if (folder / "classes.json").is_file():  # written last
        return folder
    from py3langid.modelio import load_model

    ptc, pc, classes, nextmove, row, output = load_model(path)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    try:
        arrays = {"ptc": np.asarray(ptc), "pc": np.asarray(pc), "nextmove": np.frombuffer(nextmove, nextmove.typecode),
                  "row": np.frombuffer(row, row.typecode), "output": np.asarray(output, dtype=np.int32)}  # fmt: skip
        arrays["ptc_float32"] = arrays["ptc"].astype(np.float32)
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array)
        (tmp / "classes.json").write_text(json.dumps(list(classes)))
        tmp.chmod(0o755)  # mkdtemp's folder is private; the decoded model is not
        try:
            os.replace(tmp, folder)  # another process may have won: its folder is the same
        except OSError:
            if not (folder / "classes.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
