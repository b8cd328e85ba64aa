"""`marin gc`: remove staging and superseded folders older than the retention; list what went."""

from __future__ import annotations

import argparse

from marin_assets.governance.cli_common import add_storage_argument, resolve_storage
from marin_assets.governance.leftovers import DEFAULT_RETENTION_HOURS, find_leftovers, remove_leftovers


def register(commands) -> None:  # commands: what ArgumentParser.add_subparsers() returns (a private class)
    parser = commands.add_parser("gc", help="remove *.staging-* and *.superseded-* folders older than the retention")
    parser.add_argument("--retention-hours", type=float, default=DEFAULT_RETENTION_HOURS,
                        help=f"keep leftovers younger than this (default {DEFAULT_RETENTION_HOURS:g}, "
                             "or $MARIN_GC_RETENTION_HOURS)")
    parser.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    add_storage_argument(parser)
    parser.set_defaults(handler=run_gc)


def run_gc(args: argparse.Namespace) -> int:
    storage = resolve_storage(args.storage_root)
    leftovers = find_leftovers(storage, args.retention_hours)
    if not args.dry_run:
        leftovers = remove_leftovers(storage, leftovers)
    verb = "would remove" if args.dry_run else "removed"
    for leftover in leftovers:
        print(f"{verb} {leftover.describe()}")
    total = sum(leftover.size_bytes for leftover in leftovers)
    print(f"{verb} {len(leftovers)} leftover folder(s), {total / 1e6:.1f} MB, under {storage.uri()} "
          f"(older than {args.retention_hours:g} h)")
    return 0
