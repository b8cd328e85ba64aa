"""`marin baseline refresh RUN`: write a run's committed loss-curve baseline from its finished result."""

from __future__ import annotations

import argparse
from pathlib import Path

from marin_assets.core.storage import StorageError
from marin_assets.governance.cli_common import add_storage_argument, resolve_storage
from marin_assets.train.baseline import DEFAULT_TOLERANCE, refresh_baseline


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("baseline", help="loss-curve baselines of training runs")
    actions = parser.add_subparsers(dest="action", required=True)
    refresh = actions.add_parser(
        "refresh", help="write recipes/training/baselines/RUN.json from training/RUN/final/result.json (then commit it)"
    )
    refresh.add_argument("run")
    refresh.add_argument("--out", type=Path, help="baseline file (default: recipes/training/baselines/RUN.json)")
    refresh.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                         help=f"allowed |loss - baseline| per step, nats/token (default {DEFAULT_TOLERANCE})")
    add_storage_argument(refresh)
    refresh.set_defaults(handler=run_refresh)


def run_refresh(args: argparse.Namespace) -> int:
    try:
        out = refresh_baseline(resolve_storage(args.storage_root), args.run, args.out, args.tolerance)
    except StorageError as exc:
        raise SystemExit(f"marin baseline refresh: {exc}") from None
    print(f"wrote {out}; commit it so loss_matches_baseline compares {args.run} with it")
    return 0
