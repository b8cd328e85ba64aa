"""`marin baseline refresh RUN` / `refresh-data`: write the committed loss-curve and data baselines from finished outputs."""

from __future__ import annotations

import argparse
from pathlib import Path

from marin_assets.core.storage import StorageError
from marin_assets.governance.data_baseline import (
    MIXTURES, SOURCES, cleaned_source_statistics, mixture_manifest_statistics, write_data_baseline,
)
from marin_assets.governance.nightly import load_nightly_plan
from marin_assets.governance.cli_common import add_storage_argument, resolve_storage
from marin_assets.train.baseline import DEFAULT_TOLERANCE, refresh_baseline


def register(commands) -> None:  # commands: what ArgumentParser.add_subparsers() returns (a private class)
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
    data = actions.add_parser(
        "refresh-data", help="write recipes/data/baselines/{sources,mixtures}/NAME.json from the committed cleaned "
                             "sources and mixture (default: those of recipes/nightly.yaml; then commit them)"
    )
    data.add_argument("--source", action="append",
                      help="a cleaned source (repeatable; with neither option: the nightly plan's sources and mixture)")
    data.add_argument("--mixture", action="append", help="a mixture (repeatable)")
    data.add_argument("--out-dir", type=Path, help="baselines folder (default: recipes/data/baselines)")
    add_storage_argument(data)
    data.set_defaults(handler=run_refresh_data)


def run_refresh(args: argparse.Namespace) -> int:
    try:
        out = refresh_baseline(resolve_storage(args.storage_root), args.run, args.out, args.tolerance)
    except StorageError as exc:
        raise SystemExit(f"marin baseline refresh: {exc}") from None
    print(f"wrote {out}; commit it so loss_matches_baseline compares {args.run} with it")
    return 0


def run_refresh_data(args: argparse.Namespace) -> int:
    plan = load_nightly_plan() if not (args.source or args.mixture) else None
    sources = args.source or (plan.sources if plan else [])
    mixtures = args.mixture or ([plan.mixture] if plan else [])
    storage = resolve_storage(args.storage_root)
    try:
        written = [write_data_baseline(SOURCES, s, cleaned_source_statistics(storage, s), args.out_dir) for s in sources]
        written += [write_data_baseline(MIXTURES, m, mixture_manifest_statistics(storage, m), args.out_dir)
                    for m in mixtures]
    except StorageError as exc:
        raise SystemExit(f"marin baseline refresh-data: {exc}") from None
    for path in written:
        print(f"wrote {path}")
    print("commit them so data_matches_baseline and tokens_match_baseline compare with them")
    return 0
