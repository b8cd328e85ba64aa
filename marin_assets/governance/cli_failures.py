"""`marin failures list|search|show`: read the failure catalog the run-failure sensor writes."""

from __future__ import annotations

import argparse
import json

from marin_assets.governance.cli_common import add_storage_argument, resolve_storage
from marin_assets.governance.failure_catalog import failure_markdown, list_failures, search_failures, summary_rows


def register(commands) -> None:  # commands: what ArgumentParser.add_subparsers() returns (a private class)
    parser = commands.add_parser("failures", help="list and search recorded run failures")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="newest failures first")
    listing.add_argument("--limit", type=int, default=20)
    search = actions.add_parser("search", help="failures whose record mentions TEXT (case-insensitive)")
    search.add_argument("text")
    search.add_argument("--limit", type=int, default=20)
    show = actions.add_parser("show", help="the full record of one run (id or unique id prefix)")
    show.add_argument("run_id")
    show.add_argument("--markdown", action="store_true", help="print it as a ready-to-file issue text")
    for sub in (listing, search, show):
        sub.add_argument("--json", action="store_true", help="print JSON records")
        add_storage_argument(sub)
        sub.set_defaults(handler=run_failures)


def _print_table(records: list[dict]) -> None:
    if not records:
        print("no failures recorded")
        return
    for row in summary_rows(records):
        print(f"{row['failed_at'][:19]}  {row['run_id']}  {row['job']}  {row['assets']}"
              f"[{row['partition']}]  {row['error']}")


def run_failures(args: argparse.Namespace) -> int:
    records = list_failures(resolve_storage(args.storage_root))
    if args.action == "show":
        matches = [r for r in records if r["run_id"].startswith(args.run_id)]
        if len(matches) != 1:
            print(f"{len(matches)} recorded failures match run id {args.run_id!r}")
            return 1
        print(failure_markdown(matches[0]) if args.markdown else json.dumps(matches[0], indent=2, default=str))
        return 0
    if args.action == "search":
        records = search_failures(records, args.text)
    records = records[: args.limit]
    if args.json:
        print(json.dumps(records, indent=2, default=str))
    else:
        _print_table(records)
    return 0
