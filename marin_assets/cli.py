"""`marin` command line: a small dispatcher; each command group lives in its own module."""

from __future__ import annotations

import argparse
import sys

from marin_assets import materialize_all, versions
from marin_assets.core.recipes import RecipeError
from marin_assets.core.storage import StorageError
from marin_assets.data.sources import cli_sources
from marin_assets.governance import cli_audit, cli_failures, cli_gc
from marin_assets.train import cli_baseline

COMMAND_GROUPS = (materialize_all, versions, cli_audit, cli_failures, cli_gc, cli_baseline, cli_sources)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="marin", description="marin_assets: LM data, training and scaling laws")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (RecipeError, StorageError) as exc:
        # The message names the file and field (or the path): a traceback would only bury it.
        print(f"marin: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
