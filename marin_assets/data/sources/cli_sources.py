"""`marin sources checksum NAME`: the provenance.checksum of a source's files, to put in sources.yaml."""

from __future__ import annotations

import argparse
import sys

from marin_assets.data.sources.source_inventory import source_inventory
from marin_assets.data.formats.readers import list_source_files
from marin_assets.data.sources.source_roots import require_files_within
from marin_assets.data.sources.source_registry import load_sources


def register(commands) -> None:  # commands: what ArgumentParser.add_subparsers() returns (a private class)
    parser = commands.add_parser("sources", help="registered raw sources")
    actions = parser.add_subparsers(dest="action", required=True)
    checksum = actions.add_parser(
        "checksum", help="hash the files of source NAME as the compliance check does; prints the "
                         "value for provenance.checksum in sources.yaml",
    )
    checksum.add_argument("name")
    checksum.set_defaults(handler=run_checksum)


def run_checksum(args: argparse.Namespace) -> int:
    registry = load_sources()
    if args.name not in registry.names:
        raise SystemExit(f"marin sources checksum: unknown source {args.name!r}; known: {registry.names}")
    spec = registry.get(args.name)
    # The same refusal as raw_corpus: files reached through a symlink outside the allowed roots.
    require_files_within(spec.name, list_source_files(spec), registry.allowed_roots)
    inventory = source_inventory(spec)
    if not inventory["files"]:
        raise SystemExit(f"marin sources checksum: no files match {spec.uri}")
    print(inventory["content_hash"])  # stdout: the value alone, for scripts
    size = sum(f["size"] for f in inventory["files"])
    declared = spec.provenance.checksum if spec.provenance else None
    state = ("matches sources.yaml" if declared == inventory["content_hash"]
             else f"sources.yaml has {declared}" if declared else "sources.yaml has no checksum yet")
    print(f"{len(inventory['files'])} file(s), {size} bytes under {spec.uri}; {state}. "
          f"Set it as provenance.checksum of {spec.name!r}.", file=sys.stderr)
    return 0
