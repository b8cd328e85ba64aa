"""The external shuffle behind mixture_stream.write_ordered: every input row group is read once.

The order file (mixture_order) lists a split's rows in output order, each naming (source, document). Reading,
for each window of output rows, every input row group holding one of its documents costs a pass over the
inputs per window: with windows of a fixed size, quadratic in the corpus (1M documents in windows of 50k took
2.6x the per-document time of 100k). Instead, three linear steps:

1. invert: each order row, with its output position, goes to the spill file of its input bucket
   (consecutive input row groups wanted by at most `chunk` order rows);
2. gather: bucket by bucket, each input row group is read once; its wanted rows (a document taken k times,
   k times) carry their positions to the spill stream of their output window (MAX_OPEN_SPILLS consecutive
   output row groups; more windows than MAX_OPEN_SPILLS open streams take another pass over the inputs);
3. assemble: window by window, the rows are split into one spill file per output row group, and each group,
   sorted by position, is handed back in order.

Memory: `chunk` order rows, one input row group, one output row group. Disk: the split's tokens, twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from marin_assets.core.schemas import TOKENIZED_SCHEMA
from marin_assets.tokenize.mixture_order import consecutive_ranges, read_ordered, runs
from marin_assets.tokenize.shards import ShardError

POSITION = "_position"
SPILL_SCHEMA = TOKENIZED_SCHEMA.append(pa.field(POSITION, pa.int64(), nullable=False))
MAX_OPEN_SPILLS = 256  # spill streams open at once (output windows in step 2, output row groups in step 3)
_WANTED = np.dtype([("unit", "<i8"), ("document", "<i8"), ("position", "<i8")])


def check_schema(path: str, table: pa.Table) -> None:
    if not table.schema.equals(TOKENIZED_SCHEMA):
        raise ShardError(f"{path}: schema {table.schema} is not TOKENIZED_SCHEMA")


@dataclass(frozen=True)
class InputUnits:
    """Every row group ("unit") of every source's shards, in (source, document) order, from the footers."""

    paths: list[str]
    groups: list[int]  # row group index in its file
    firsts: np.ndarray  # first document of the unit within its source
    rows: np.ndarray
    source_base: np.ndarray  # units of source s: [source_base[s], source_base[s + 1])

    @classmethod
    def read(cls, source_shards: list[list[str]]) -> InputUnits:
        paths, groups, firsts, rows, base = [], [], [], [], [0]
        for shards in source_shards:
            first = 0
            for path in shards:
                with fsspec.open(path, "rb") as f:
                    metadata = pq.ParquetFile(f).metadata
                for g in range(metadata.num_row_groups):
                    n = metadata.row_group(g).num_rows
                    paths.append(path), groups.append(g), firsts.append(first), rows.append(n)
                    first += n
            base.append(len(paths))
        return cls(paths, groups, np.asarray(firsts, np.int64), np.asarray(rows, np.int64), np.asarray(base))

    def of(self, sources: np.ndarray, documents: np.ndarray) -> np.ndarray:
        """The unit holding each (source, document); ShardError for a document beyond its source's rows."""
        out = np.empty(len(sources), np.int64)
        for s in np.unique(sources).tolist():
            mine, (lo, hi) = sources == s, self.source_base[s : s + 2].tolist()
            documents_of_s = documents[mine]
            total = int(self.firsts[hi - 1] + self.rows[hi - 1]) if hi > lo else 0
            if documents_of_s.max() >= total:
                raise ShardError(f"source {s}: the plan names a document beyond its shards' {total} rows")
            out[mine] = lo + np.searchsorted(self.firsts[lo:hi], documents_of_s, side="right") - 1
        return out


def output_groups(path: str, total: int, source_shards: list[list[str]], starts: np.ndarray, chunk: int,
                  spill: str) -> Iterator[tuple[int, pa.Table]]:
    """(g, rows of output row group g in position order, TOKENIZED_SCHEMA) for every group, in order.
    starts: output row group g holds positions [starts[g], starts[g + 1])."""
    units = InputUnits.read(source_shards)
    buckets = _invert(path, total, units, chunk, spill)
    groups = len(starts) - 1
    window_groups = list(range(0, groups, MAX_OPEN_SPILLS))  # first group of each output window
    window_starts = starts[window_groups]
    for first in range(0, len(window_groups), MAX_OPEN_SPILLS):
        _gather(buckets, units, window_starts, range(first, min(len(window_groups), first + MAX_OPEN_SPILLS)), spill)
    for w, g0 in enumerate(window_groups):
        yield from _assemble(os.path.join(spill, f"window-{w}.arrow"), range(g0, min(groups, g0 + MAX_OPEN_SPILLS)),
                             starts, spill)  # fmt: skip


def _order_chunks(path: str, total: int, chunk: int) -> Iterator[tuple[int, np.ndarray]]:
    for start in range(0, total, chunk):
        yield start, read_ordered(path, start, min(total, start + chunk))


def _invert(path: str, total: int, units: InputUnits, chunk: int, spill: str) -> list[str]:
    """Step 1: the spill file of each input bucket, holding (unit, document, position) of its wanted rows."""
    counts = np.zeros(len(units.paths), np.int64)
    for _, rows in _order_chunks(path, total, chunk):
        counts += np.bincount(units.of(rows["source"], rows["document"]), minlength=counts.size)
    bucket_of = consecutive_ranges(counts, chunk)
    files = [os.path.join(spill, f"in-{b}.bin") for b in range(int(bucket_of[-1]) + 1 if bucket_of.size else 0)]
    for start, rows in _order_chunks(path, total, chunk):
        wanted = np.empty(rows.size, _WANTED)
        wanted["unit"] = units.of(rows["source"], rows["document"])
        wanted["document"], wanted["position"] = rows["document"], start + np.arange(rows.size)
        of = bucket_of[wanted["unit"]]
        by_bucket = np.argsort(of, kind="stable")  # stable: each file's positions stay ascending
        wanted, of = wanted[by_bucket], of[by_bucket]
        for a, b in runs(of):
            with open(files[of[a]], "ab") as f:
                wanted[a:b].tofile(f)
    return files


def _gather(buckets: list[str], units: InputUnits, window_starts: np.ndarray, windows: range, spill: str) -> None:
    """Step 2: the wanted rows of every input unit, read once, to the spill streams of the given windows."""
    sinks: dict[int, tuple] = {}
    opened: list = []  # [path, file, ParquetFile] of the input file being read
    try:
        for bucket in buckets:
            if not os.path.exists(bucket):
                continue
            wanted = np.fromfile(bucket, _WANTED)
            window = np.searchsorted(window_starts, wanted["position"], side="right") - 1
            mine = (window >= windows.start) & (window < windows.stop)
            wanted, window = wanted[mine], window[mine]
            by_unit = np.lexsort((wanted["document"], wanted["unit"]))
            wanted, window = wanted[by_unit], window[by_unit]
            for a, b in runs(wanted["unit"]):
                u = int(wanted["unit"][a])
                table = _row_group(opened, units.paths[u], units.groups[u])
                by_window = np.argsort(window[a:b], kind="stable")
                picked = table.take(pa.array(wanted["document"][a:b][by_window] - units.firsts[u]))
                picked = pa.Table.from_arrays([*picked.columns, pa.array(wanted["position"][a:b][by_window])],
                                              schema=SPILL_SCHEMA)  # fmt: skip
                windows_of = window[a:b][by_window]
                for c, d in runs(windows_of):
                    w = int(windows_of[c])
                    _sink(sinks, w, os.path.join(spill, f"window-{w}.arrow")).write_table(picked.slice(c, d - c))
    finally:
        if opened:
            opened[1].close()
        for file, writer in sinks.values():
            writer.close()
            file.close()


def _row_group(opened: list, path: str, group: int) -> pa.Table:
    """Row group `group` of the input file at path, keeping that file open for the next unit (units of a
    bucket are consecutive, so each file is opened once a bucket)."""
    if not opened or opened[0] != path:
        if opened:
            opened[1].close()
        file = fsspec.open(path, "rb").open()
        opened[:] = [path, file, pq.ParquetFile(file)]
    table = opened[2].read_row_group(group).replace_schema_metadata(None)
    check_schema(path, table)
    return table


def _sink(sinks: dict, key: int, path: str):
    if key not in sinks:
        file = pa.OSFile(path, "wb")
        sinks[key] = (file, pa.ipc.new_stream(file, SPILL_SCHEMA))
    return sinks[key][1]


def _assemble(window_file: str, groups: range, starts: np.ndarray, spill: str) -> Iterator[tuple[int, pa.Table]]:
    """Step 3: one window's rows split per output row group, then each group in position order."""
    sinks: dict[int, tuple] = {}
    try:
        if os.path.exists(window_file):
            with pa.OSFile(window_file) as source:
                for batch in pa.ipc.open_stream(source):
                    group_of = np.searchsorted(starts, batch.column(POSITION).to_numpy(), side="right") - 1
                    by_group = np.argsort(group_of, kind="stable")
                    batch, group_of = batch.take(pa.array(by_group)), group_of[by_group]
                    for a, b in runs(group_of):
                        g = int(group_of[a])
                        _sink(sinks, g, os.path.join(spill, f"group-{g}.arrow")).write_batch(batch.slice(a, b - a))
            os.remove(window_file)
    finally:
        for file, writer in sinks.values():
            writer.close()
            file.close()
    for g in groups:
        yield g, _group(os.path.join(spill, f"group-{g}.arrow"), g, starts)


def _group(path: str, g: int, starts: np.ndarray) -> pa.Table:
    """Output row group g from its spill file (removed), sorted by position and checked to cover them all."""
    if not os.path.exists(path):
        raise RuntimeError(f"mixture row group {g}: no spilled rows arrived for its positions")
    with pa.OSFile(path) as source:
        table = pa.ipc.open_stream(source).read_all().sort_by(POSITION)
    os.remove(path)
    position, (lo, hi) = table.column(POSITION), starts[g : g + 2].tolist()
    # Arrow compute, not a numpy range: a row group can hold a million one-token documents
    if table.num_rows != hi - lo or pc.count_distinct(position).as_py() != hi - lo or \
            pc.min(position).as_py() != lo or pc.max(position).as_py() != hi - 1:
        raise RuntimeError(f"mixture row group {g}: spilled rows do not cover its positions")
    return table.drop_columns([POSITION])
