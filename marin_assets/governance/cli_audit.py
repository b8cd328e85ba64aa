"""`marin audit RUN`: print a training run's audit (checkpoint -> raw sources) and write it to storage."""

from __future__ import annotations

import argparse
import json
import os

from marin_assets.governance.audit import build_audit, locate_run_output, render_audit_markdown, write_audit
from marin_assets.governance.cli_common import add_storage_argument, resolve_storage


def register(commands) -> None:  # commands: what ArgumentParser.add_subparsers() returns (a private class)
    parser = commands.add_parser("audit", help="audit a training run down to its raw sources")
    parser.add_argument("run", help="training_run partition (run name)")
    parser.add_argument("--checkpoint-uri", help="output folder of the run (default: from the Dagster instance, "
                        "else found under <storage root>/training/<run>)")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of Markdown")
    parser.add_argument("--no-write", action="store_true", help="do not write governance/audit/<run>.md/.json")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the audit finds problems")
    add_storage_argument(parser)
    parser.set_defaults(handler=run_audit)


def _checkpoint_from_instance(run: str) -> str | None:
    """The run's recorded output_uri, when a Dagster instance (DAGSTER_HOME) is configured."""
    if not os.environ.get("DAGSTER_HOME"):
        return None
    import dagster as dg

    from marin_assets.defs.governance.governance_assets import checkpoint_uris

    with dg.DagsterInstance.get() as instance:
        return checkpoint_uris(instance, [run])[run]


def run_audit(args: argparse.Namespace) -> int:
    storage = resolve_storage(args.storage_root)
    uri = args.checkpoint_uri or _checkpoint_from_instance(args.run) or locate_run_output(storage, args.run)
    report = build_audit(storage, args.run, uri)
    print(json.dumps(report, indent=2, default=str) if args.json else render_audit_markdown(report))
    if not report["nodes"]:
        return 1  # nothing to audit: the run was never materialized here
    if not args.no_write:
        md_uri, json_uri = write_audit(storage, report)
        print(f"\nwritten: {md_uri}\n         {json_uri}")
    return 1 if args.strict and report["problems"] else 0
