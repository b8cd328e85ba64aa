"""Rows of dicts as a Dagster table value: the UI draws a real table with a column per key.

One helper for every asset (per-rule counts, rejected examples, mixture weights, predictions), so
long keys do not overflow a two-column metadata row and no table is written as raw JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg

_TYPES = ((bool, "bool"), (int, "int"), (float, "float"))


def _column_type(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    for python_type, name in _TYPES:
        if present and all(isinstance(v, python_type) and (python_type is not int or not isinstance(v, bool))
                           for v in present):
            return name
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def round_sig(value: Any, digits: int = 4) -> Any:
    """Floats to `digits` significant figures (what a reader compares); other values unchanged."""
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")) and value != 0:
        return float(f"{value:.{digits}g}")
    return value


def metadata_table(rows: Iterable[Mapping[str, Any]], columns: list[str] | None = None,
                   significant: int | None = 4) -> dg.TableMetadataValue:
    rows = [dict(r) for r in rows]
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    if significant:
        rows = [{k: round_sig(v, significant) for k, v in r.items()} for r in rows]
    schema = dg.TableSchema(columns=[dg.TableColumn(c, _column_type([r.get(c) for r in rows])) for c in columns])
    records = [dg.TableRecord({c: r.get(c) for c in columns}) for r in rows]
    return dg.MetadataValue.table(records=records, schema=schema)


def counts_table(counts: Mapping[str, int], key: str = "rule", value: str = "count") -> dg.TableMetadataValue:
    """A {name: count} mapping as a two-column table, largest first."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return metadata_table([{key: k, value: int(v)} for k, v in ordered], columns=[key, value])
