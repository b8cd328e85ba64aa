"""A raw source's inventory: every file with its size and sha256, and their combined content hash.

Apart from the compliance decision (compliance.py), which reads the committed inventory: listing files needs
the format classes (their suffixes), and the decision, which every trained output's gate reaches, must not.
"""

from __future__ import annotations

from marin_assets.core.hashing import combine_hashes
from marin_assets.core.storage import file_hashes
from marin_assets.data.sources.source_files import list_source_files, relative_name, source_root
from marin_assets.data.sources.source_registry import SourceSpec


def source_inventory(spec: SourceSpec) -> dict:
    """Every file of the source with its size and sha256, and their combined content hash.

    The content hash is core.storage.folder_hash over the files' names relative to the source root,
    the value `marin sources checksum` prints for provenance.checksum.
    """
    import fsspec

    root = source_root(spec)
    uris = list_source_files(spec)
    hashes = file_hashes(root, [relative_name(uri, spec) for uri in uris])
    files = []
    for uri, (name, digest) in zip(uris, hashes, strict=True):
        fs, path = fsspec.core.url_to_fs(uri)
        files.append({"path": name, "size": fs.size(path), "sha256": digest})
    return {
        "source": spec.name,
        "uri": spec.uri,
        "files": files,
        "content_hash": combine_hashes(hashes),
    }
