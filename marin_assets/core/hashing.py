"""One hashing helper for the whole platform: content hashes are the data versions."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_stream(stream) -> str:
    h = hashlib.sha256()
    while chunk := stream.read(_CHUNK):
        h.update(chunk)
    return h.hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal objects give equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def hash_json(obj: Any) -> str:
    return sha256_bytes(canonical_json(obj).encode())


def combine_hashes(named: Iterable[tuple[str, str]]) -> str:
    """Order-independent hash of (name, hash) pairs, e.g. the files of a folder."""
    h = hashlib.sha256()
    for name, digest in sorted(named):
        h.update(name.encode())
        h.update(b"\0")
        h.update(digest.encode())
        h.update(b"\n")
    return h.hexdigest()
