"""Read the metrics of an offline W&B run from its `run-<id>.wandb` file (wandb 0.31 has no Python reader).

The file is a LevelDB-style log (32 KiB blocks; each chunk: crc32 u32, length u16, type u8) after
a 7-byte W&B header; each record is a `wandb_internal_pb2.Record`.
"""

import json
import struct
from pathlib import Path

BLOCK, CHUNK_HEADER, FILE_HEADER = 32768, 7, 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path: Path):
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    pos, parts = FILE_HEADER, []
    while pos + CHUNK_HEADER <= len(data):
        if BLOCK - pos % BLOCK < CHUNK_HEADER:  # block trailer padding
            pos += BLOCK - pos % BLOCK
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + CHUNK_HEADER])
        if kind == 0 and length == 0:
            break
        parts.append(data[pos + CHUNK_HEADER:pos + CHUNK_HEADER + length])
        pos += CHUNK_HEADER + length
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(parts))
            parts = []
            yield record


def history(run_dir: Path) -> dict[int, dict[str, float]]:
    """step -> {metric: value} of every `wandb.log` call of the run."""
    [path] = run_dir.glob("run-*.wandb")
    out: dict[int, dict[str, float]] = {}
    for record in records(path):
        if record.WhichOneof("record_type") != "history":
            continue
        items = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
        out.setdefault(int(items.pop("_step")), {}).update(
            {k: v for k, v in items.items() if not k.startswith("_")})
    return out
