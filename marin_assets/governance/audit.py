"""Audit report: from a checkpoint down to the raw sources, from the `_provenance.json` files alone.

Each manifest names its inputs ("asset[partition]" -> data version) and where they live, so the
chain is walked file by file; no Dagster instance is needed, and the report states what was really
used: an input whose current output hash differs from the recorded version is flagged as changed.
`build_audit` collects (reads storage); `render_audit_markdown` is pure.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import deque

from marin_assets.core import layout
from marin_assets.core.checkpoint_folders import checkpoint_steps
from marin_assets.core.checkpoint_folders import checkpoint_uri as checkpoint_uri_at
from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.data.sources.licenses import INVENTORY_NAME, compliance_from_inventory

RESULT_FILE = "result.json"  # what a training or scaling run commits (train.report, scaling.run_results)
_INVENTORY_FIELDS = ("content_hash", "checksum", "file_count", "total_bytes", "uri", "format")


def _read_json_at(storage: Storage, uri: str) -> dict | None:
    if not storage.fs.exists(uri):
        return None
    with storage.fs.open(uri, "r") as f:
        return json.load(f)


def _label(manifest: dict) -> str:
    partition = manifest.get("partition")
    return f"{manifest['asset']}[{partition}]" if partition is not None else manifest["asset"]


def _node(manifest: dict, depth: int, inventory: dict | None) -> dict:
    env = manifest.get("environment", {})
    node = {
        "label": _label(manifest),
        "depth": depth,
        "asset": manifest["asset"],
        "partition": manifest.get("partition"),
        "output_uri": manifest["output_uri"],
        "output_hash": manifest["output_hash"],
        "recipe_hash": manifest["recipe_hash"],
        "recipe": manifest.get("recipe"),
        "code_version": manifest["code_version"],
        "git_commit": env.get("git_commit"),
        "git_dirty": env.get("git_dirty"),
        "uv_lock_sha256": env.get("uv_lock_sha256"),
        "python": env.get("python"),
        "spark": env.get("spark"),
        "devices": manifest.get("devices", []),
        "run_id": manifest.get("run_id"),
        "finished_at": manifest.get("finished_at"),
        "licenses": manifest.get("licenses", {}),
        "data_use": manifest.get("data_use", {}),
        "inputs": [],
    }
    if inventory is not None:
        node["inventory"] = {k: inventory[k] for k in _INVENTORY_FIELDS if k in inventory}
        if isinstance(inventory.get("files"), list):
            node["inventory"]["file_count"] = len(inventory["files"])
        node["inventory"]["compliance"] = compliance_from_inventory(inventory, manifest.get("partition") or "?")
    return node


def build_audit(storage: Storage, run: str, checkpoint_uri: str) -> dict:
    """Walk manifests upstream from `checkpoint_uri`; return the JSON-able audit report."""
    nodes: list[dict] = []
    problems: list[str] = []
    seen: set[str] = set()
    queue = deque([(checkpoint_uri.rstrip("/"), 0)])
    while queue:
        uri, depth = queue.popleft()
        if uri in seen:
            continue
        seen.add(uri)
        content = storage.follow(uri)  # on gs:// an output's files sit under the version its pointer names
        manifest = _read_json_at(storage, f"{content}/{MANIFEST_NAME}")
        if manifest is None:
            problems.append(f"no provenance manifest at {uri}/{MANIFEST_NAME}")
            continue
        node = _node(manifest, depth, _read_json_at(storage, f"{content}/{INVENTORY_NAME}"))
        for label, version in manifest.get("inputs", {}).items():
            upstream_uri = manifest.get("input_uris", {}).get(label)
            status = _input_status(storage, upstream_uri, version)
            node["inputs"].append({"label": label, "data_version": version, "uri": upstream_uri, "status": status})
            if status != "verified":
                problems.append(f"{node['label']}: input {label} is {status}")
            if upstream_uri:
                queue.append((upstream_uri.rstrip("/"), depth + 1))
        nodes.append(node)
    dirty = [n["label"] for n in nodes if n["git_dirty"]]
    if dirty:
        problems.append(f"built from a dirty git tree (uncommitted code): {', '.join(dirty)}")
    sources = _sources(nodes)
    problems += [f"source {s['source']} is not cleared: {'; '.join(s['problems'])}" for s in sources if not s["cleared"]]
    return {
        "run": run,
        "checkpoint_uri": checkpoint_uri,
        "generated_at": dt.datetime.now(dt.UTC).isoformat(),
        "nodes": nodes,
        "sources": sources,
        "problems": problems,
        "checkpoints": intermediate_checkpoints(storage, checkpoint_uri),
    }


def intermediate_checkpoints(storage: Storage, output_uri: str) -> list[dict]:
    """Every complete checkpoint the run wrote (intermediate ones too), from its result.json's checkpoint_uri:
    each was trained from the same inputs as the audited output, so the lineage above covers it."""
    result = _read_json_at(storage, f"{output_uri.rstrip('/')}/{RESULT_FILE}") or {}
    final = result.get("checkpoint_uri")
    if not final:
        return []
    folder = final.rstrip("/").rsplit("/", 1)[0]
    return [{"step": step, "uri": checkpoint_uri_at(folder, step), "final": checkpoint_uri_at(folder, step) == final}
            for step in checkpoint_steps(folder)]


def _input_status(storage: Storage, upstream_uri: str | None, version: str) -> str:
    if not upstream_uri:
        return "unlocated (no output_uri recorded)"
    upstream = _read_json_at(storage, f"{storage.follow(upstream_uri).rstrip('/')}/{MANIFEST_NAME}")
    if upstream is None:
        return "missing"
    return "verified" if upstream["output_hash"] == version else "changed since (re-materialized)"


def _sources(nodes: list[dict]) -> list[dict]:
    """One row per raw source seen anywhere in the chain; the raw node's own verdict wins."""
    rows: dict[str, dict] = {}
    for node in sorted(nodes, key=lambda n: n["depth"]):
        for source, spdx in node["licenses"].items():
            use = node["data_use"].get(source, {})
            rows[source] = {
                "source": source,
                "license": spdx,
                "terms": use.get("terms", "unknown"),
                "cleared": use.get("cleared"),
                "problems": use.get("problems", []),
                "inventory": rows.get(source, {}).get("inventory", {}),
            }
        if "inventory" in node and node["partition"]:
            row = rows.setdefault(node["partition"], {
                "source": node["partition"], "license": "unrecorded", "terms": "unknown",
            })
            row["inventory"] = {k: v for k, v in node["inventory"].items() if k != "compliance"}
            row["cleared"] = node["inventory"]["compliance"]["cleared"]
            row["problems"] = node["inventory"]["compliance"]["problems"]
    return [rows[name] for name in sorted(rows)]


def _short(value: object, n: int = 12) -> str:
    return f"`{str(value)[:n]}`" if value else "-"


def render_audit_markdown(report: dict) -> str:
    """The report as Markdown for the Dagster UI (MetadataValue.md) and `governance/audit/<run>.md`."""
    top = report["nodes"][0] if report["nodes"] else None
    lines = [f"# Audit: training run `{report['run']}`", ""]
    lines.append(f"Checkpoint `{report['checkpoint_uri']}`" + (f", output hash {_short(top['output_hash'], 16)}" if top else ""))
    lines.append(f"Generated {report['generated_at']}.")
    lines.append("")
    verdict = "**All sources cleared; every input verified.**" if not report["problems"] else (
        f"**{len(report['problems'])} problem(s):**"
    )
    lines += [verdict, *[f"- {p}" for p in report["problems"]], ""]
    lines += ["## Sources and licenses", "", "| source | license | terms | cleared | checksum | files |",
              "|---|---|---|---|---|---|"]
    for s in report["sources"]:
        inv = s["inventory"]
        checksum = inv.get("content_hash") or inv.get("checksum")
        cleared = {True: "yes", False: "**NO**", None: "unverified"}[s["cleared"]]
        lines.append(f"| {s['source']} | {s['license']} | {s['terms']} | {cleared} | {_short(checksum, 16)} | "
                     f"{inv.get('file_count', '-')} |")
    lines += ["", "## Lineage (checkpoint first, raw sources last)", "",
              "| depth | asset | output hash | recipe hash | code version | git commit | run id | finished |",
              "|---|---|---|---|---|---|---|---|"]
    for n in report["nodes"]:
        commit = _short(n["git_commit"], 10) + (" (dirty)" if n["git_dirty"] else "")
        lines.append(f"| {n['depth']} | {n['label']} | {_short(n['output_hash'])} | {_short(n['recipe_hash'])} | "
                     f"{_short(n['code_version'])} | {commit} | {_short(n['run_id'], 8)} | {n['finished_at'] or '-'} |")
    if report.get("checkpoints"):
        lines += ["", "## Checkpoints (trained from the inputs above)", "", "| step | checkpoint | final |",
                  "|---|---|---|"]
        lines += [f"| {c['step']} | `{c['uri']}` | {'yes' if c['final'] else ''} |" for c in report["checkpoints"]]
    lines += ["", "## Details", ""]
    for n in report["nodes"]:
        lines += [f"### {n['label']}", "", f"- output: `{n['output_uri']}`",
                  f"- environment: python {n['python']}, uv.lock {_short(n['uv_lock_sha256'])}, spark {n['spark'] or '-'}"
                  + (f", devices {', '.join(n['devices'])}" if n["devices"] else "")]
        for i in n["inputs"]:
            lines.append(f"- input {i['label']}: {_short(i['data_version'])} ({i['status']})")
        lines += ["", "```json", json.dumps(n["recipe"], indent=2, sort_keys=True, default=str), "```", ""]
    return "\n".join(lines)


AUDIT_DIR = "audit"


def locate_run_output(storage: Storage, run: str, asset: str = "training_run") -> str:
    """Where a run's output lives without a Dagster instance to ask: training/<run> itself, or the
    sub-folder of it whose manifest belongs to `asset` (e.g. training/<run>/final)."""
    base = storage.uri(layout.TRAINING, run)
    candidates = [f"{base}/{MANIFEST_NAME}", *sorted(storage.fs.glob(f"{base}/*/{MANIFEST_NAME}"))]
    for path in candidates:
        manifest = _read_json_at(storage, path)
        if manifest is not None and manifest.get("asset") == asset:
            return path.rsplit("/", 1)[0]
    return base


def write_audit(storage: Storage, report: dict) -> tuple[str, str]:
    """Write `governance/audit/<run>.md` and `.json` (each atomically); return both URIs."""
    markdown = render_audit_markdown(report)
    md_uri = storage.write_bytes_atomic(markdown.encode(), layout.GOVERNANCE, AUDIT_DIR, f"{report['run']}.md")
    json_uri = storage.write_json_atomic(report, layout.GOVERNANCE, AUDIT_DIR, f"{report['run']}.json")
    return md_uri, json_uri
