"""The failure catalog: one JSON record per failed run under `governance/failure_catalog/<run_id>.json`.

Append-only by construction (one file per run id, written atomically), so concurrent sensor ticks
never clobber each other and the catalog can be read, searched and shipped as plain files.
Everything here is pure or plain storage I/O; the sensor (sensors.py) fills a record from Dagster.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from collections.abc import Iterable

from marin_assets.core import layout
from marin_assets.core.hashing import hash_json
from marin_assets.core.storage import Storage

CATALOG_DIR = "failure_catalog"
STACK_TAIL_LINES = 15
LOG_TAIL_LINES = 30


def failure_record(
    *,
    run_id: str,
    job_name: str,
    failed_at: dt.datetime,
    partition: str | None,
    assets: Iterable[str],
    steps: list[dict],
    run_error: str,
    log_tail: list[str],
    tags: dict[str, str],
    run_config: dict,
    code_versions: dict[str, str],
    environment: dict,
    last_checkpoint: str | None = None,
) -> dict:
    """A catalog record. `steps`: [{"step_key", "assets", "error_class", "message", "stack_tail"}]."""
    return {
        "run_id": run_id,
        "job_name": job_name,
        "failed_at": failed_at.astimezone(dt.UTC).isoformat(),
        "partition": partition,
        "assets": sorted(set(assets)),
        "steps": steps,
        "run_error": run_error,
        "log_tail": log_tail[-LOG_TAIL_LINES:],
        "tags": dict(sorted(tags.items())),
        "recipe": {"run_config": run_config, "code_versions": dict(sorted(code_versions.items()))},
        "provenance": environment,
        "last_checkpoint": last_checkpoint,
    }


def step_failure(step_key: str, assets: Iterable[str], error_chain: list[tuple[str, str, list[str]]]) -> dict:
    """Summarize one failed step from its error chain [(class name, message, stack lines)], outermost
    first. Dagster wraps user errors in its own; the first non-Dagster error is the one that matters."""
    chosen = next((e for e in error_chain if not e[0].startswith("Dagster")), error_chain[-1] if error_chain else None)
    cls_name, message, stack = chosen or ("unknown", "", [])
    message = message.strip().removeprefix(f"{cls_name}: ")  # Python's formatting repeats the class
    return {
        "step_key": step_key,
        "assets": sorted(set(assets)),
        "error_class": cls_name,
        "message": message,
        "stack_tail": [line.rstrip("\n") for line in stack][-STACK_TAIL_LINES:],
    }


def write_failure(storage: Storage, record: dict) -> str:
    return storage.write_json_atomic(record, layout.GOVERNANCE, CATALOG_DIR, f"{record['run_id']}.json")


def list_failures(storage: Storage) -> list[dict]:
    """All records, newest failure first; an unreadable file is an error naming it."""
    base = storage.uri(layout.GOVERNANCE, CATALOG_DIR)
    if not storage.fs.exists(base):
        return []
    records = []
    for path in storage.fs.glob(f"{base}/*.json"):
        with storage.fs.open(path, "r") as f:
            try:
                records.append(json.load(f))
            except json.JSONDecodeError as exc:
                raise ValueError(f"failure catalog file {posixpath.basename(path)} is not valid JSON: {exc}") from None
    return sorted(records, key=lambda r: (r["failed_at"], r["run_id"]), reverse=True)


def search_failures(records: Iterable[dict], text: str) -> list[dict]:
    """Records whose content mentions `text` (case-insensitive), e.g. an error class, asset or message."""
    needle = text.lower()
    return [r for r in records if needle in json.dumps(r, default=str).lower()]


def headline(record: dict) -> str:
    """One line: the first failed step's error, else the run's error."""
    if record["steps"]:
        step = record["steps"][0]
        first = step["message"].splitlines()[0] if step["message"] else ""
        return f"{step['error_class']}: {first}"[:200]
    return (record["run_error"].splitlines() or [""])[0][:200]


def summary_rows(records: Iterable[dict]) -> list[dict]:
    return [
        {
            "failed_at": r["failed_at"],
            "run_id": r["run_id"][:8],
            "job": r["job_name"],
            "assets": ", ".join(r["assets"]) or "-",
            "partition": r["partition"] or "-",
            "error": headline(r),
        }
        for r in records
    ]


def summary_markdown(records: list[dict]) -> str:
    if not records:
        return "No failed runs recorded."
    lines = ["| failed at | run | job | assets | partition | error |", "|---|---|---|---|---|---|"]
    for row in summary_rows(records):
        cells = [str(v).replace("|", "\\|").replace("\n", " ") for v in row.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def catalog_version(records: list[dict]) -> str:
    """Data version of the catalog: changes exactly when a record is added or rewritten."""
    return hash_json(sorted(records, key=lambda r: r["run_id"]))


def failure_markdown(record: dict) -> str:
    """A failure as a ready-to-file issue: what failed, the error, where to resume, how to reproduce."""
    assets = ", ".join(record["assets"]) or "(no asset)"
    partition = record.get("partition")
    target = f"{assets}[{partition}]" if partition else assets
    versions = ", ".join(f"{k} `{v}`" for k, v in record["recipe"]["code_versions"].items())
    lines = [f"# Failed run: {target}", "",
             f"- run id: `{record['run_id']}` (job `{record['job_name']}`), failed at {record['failed_at']}",
             f"- last complete checkpoint: {f'`{c}`' if (c := record.get('last_checkpoint')) else 'none'}",
             f"- code versions: {versions or 'none'}",
             f"- git commit: `{record['provenance'].get('git_commit', 'unknown')}`, uv.lock sha256: "
             f"`{record['provenance'].get('uv_lock_sha256', 'unknown')}`", ""]
    for step in record["steps"] or []:
        lines += [f"## Step `{step['step_key']}`: {step['error_class']}", "", step["message"], "", "```",
                  *step["stack_tail"], "```", ""]
    if not record["steps"]:
        lines += ["## Run error", "", record["run_error"], ""]
    select = ",".join(record["assets"])
    lines += ["## Reproduce", "", "```bash",
              f"dg launch --assets {select}" + (f" --partition {partition}" if partition else ""), "```", "",
              "## Log tail", "", "```", *record["log_tail"], "```"]
    return "\n".join(lines) + "\n"
