"""Where raw sources may live: a registry entry cannot point the pipeline at arbitrary files.

A source URI must resolve (`..` collapsed; for local paths, symlinks resolved too) to a location
inside one of the allowed roots: the registry's `allowed_roots` (default: the repo's sample data)
plus every entry of $MARIN_DATA_ROOTS (colon-separated; `gs://` prefixes allowed). So
`../../etc/passwd` or `sample_data/../../../etc/*` is refused before anything is read.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from marin_assets.core.recipes import RecipeError

DATA_ROOTS_ENV = "MARIN_DATA_ROOTS"
SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"


class SourceOutsideRootsError(RecipeError):
    pass


def env_roots(value: str | None = None) -> list[str]:
    """$MARIN_DATA_ROOTS split on ':' except the one in 'scheme://'."""
    value = os.environ.get(DATA_ROOTS_ENV, "") if value is None else value
    return [part for part in re.split(r":(?!//)", value) if part.strip()]


def _is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def normalize(uri: str, base: Path | None = None) -> str:
    """The location a URI really names: remote -> scheme://collapsed/path; local -> realpath.

    Relative local paths are taken relative to `base` (the registry file's folder). Glob characters
    are kept: realpath resolves the existing prefix, and a glob's `*` never matches `..`.
    """
    if _is_remote(uri):
        scheme, rest = uri.split("://", 1)
        return f"{scheme}://{posixpath.normpath('/' + rest).lstrip('/')}"
    path = uri.removeprefix("file://")
    if base is not None and not os.path.isabs(path):
        path = os.path.join(base, path)
    return os.path.realpath(path)


def is_within(location: str, root: str) -> bool:
    """Component-wise containment: /data/a is within /data, /data-private is not."""
    root = root.rstrip("/")
    return location == root or location.startswith(root + "/")


def allowed_roots(registry_roots: list[str] | None, base: Path | None = None) -> list[str]:
    """Normalized allowed roots: the registry's (default: sample data) plus $MARIN_DATA_ROOTS."""
    declared = [str(SAMPLE_DATA)] if registry_roots is None else list(registry_roots)
    roots = [normalize(r, base) for r in declared] + [normalize(r) for r in env_roots()]
    return list(dict.fromkeys(roots))


def check_source_uri(
    name: str, uri: str, roots: list[str], registry: str | Path = "sources.yaml", base: Path | None = None
) -> None:
    """Raise a clear error when a source's URI (relative: to `base`) escapes every allowed root."""
    location = normalize(uri, base)
    if any(is_within(location, root) for root in roots):
        return
    raise SourceOutsideRootsError(
        f"{registry}: source {name!r}: uri {uri!r} resolves to {location!r}, outside the allowed roots "
        f"{roots}; add its folder to `allowed_roots` in the registry or to ${DATA_ROOTS_ENV}"
    )


def require_files_within(name: str, files: list[str], roots: list[str]) -> list[str]:
    """A glob can still reach outside through a symlinked folder below the root: check what it matched."""
    outside = [f for f in files if not any(is_within(normalize(f), root) for root in roots)]
    if outside:
        raise SourceOutsideRootsError(
            f"source {name!r}: {len(outside)} matched file(s) resolve outside the allowed roots {roots} "
            f"(symlinks?), e.g. {outside[0]!r} -> {normalize(outside[0])!r}"
        )
    return files
