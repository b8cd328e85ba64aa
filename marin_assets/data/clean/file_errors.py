"""File-level errors of a cleaning run, for the table in the materialization metadata and the run log.

A file-level error is a quarantine reason that stands for a part of a file, not one record: a
corrupt or truncated stream, an unreadable or empty file. Readers state what was lost in the
reason's detail ("lost N bytes, M records"; records may be unknown), see `loss_detail`. Files of a
source folder that are not data (README, _SUCCESS) are listed too, as `skipped`.
"""

from __future__ import annotations

import re

from marin_assets.data.formats import records as r

FILE_LEVEL_CODES = (r.CORRUPT_STREAM, r.UNREADABLE_FILE, r.EMPTY_FILE, r.TRUNCATED_WARC_RECORD)
SKIPPED = "skipped"
COLUMNS = ("file", "reason", "offset", "lost_bytes", "lost_records")
MAX_SKIPPED_ROWS = 20  # a folder of pages with its images: name a few, count the rest
_LOSS_RE = re.compile(r"lost (\d+) bytes?(?:, (\d+|unknown) records?)?")


def loss_detail(lost_bytes: int, lost_records: int | None) -> str:
    return f"lost {lost_bytes} bytes, {'unknown' if lost_records is None else lost_records} records"


def parse_loss(reason: str) -> tuple[int | None, int | None]:
    """(bytes, records) lost as a reason states them; None where not stated or unknown."""
    match = _LOSS_RE.search(reason)
    if not match:
        return None, None
    records = match.group(2)
    return int(match.group(1)), int(records) if records and records != "unknown" else None


def file_error_rows(quarantined: list[tuple[str, int, str]], skipped: list[str]) -> list[dict]:
    """Rows (COLUMNS) from (file, offset, reason) of quarantined records and skipped file names."""
    rows = []
    for file, offset, reason in quarantined:
        if reason.split(":", 1)[0] in FILE_LEVEL_CODES:
            lost_bytes, lost_records = parse_loss(reason)
            rows.append({"file": file, "reason": reason, "offset": offset, "lost_bytes": lost_bytes,
                         "lost_records": lost_records})  # fmt: skip
    rows += [{"file": name, "reason": f"{SKIPPED}: not a data file of this source's format", "offset": None,
              "lost_bytes": None, "lost_records": None} for name in skipped[:MAX_SKIPPED_ROWS]]  # fmt: skip
    if len(skipped) > MAX_SKIPPED_ROWS:
        rows.append({"file": f"({len(skipped) - MAX_SKIPPED_ROWS} more files)", "reason": f"{SKIPPED}: not data files",
                     "offset": None, "lost_bytes": None, "lost_records": None})  # fmt: skip
    return sorted(rows, key=lambda row: (row["file"], row["offset"] or 0, row["reason"]))


def warning_line(source: str, row: dict) -> str:
    where = "" if row["offset"] is None else f" at offset {row['offset']}"
    return f"{source}: file {row['file']}{where}: {row['reason']}"
