"""The independent per-format record counter agrees with the readers on good and hostile files."""

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from marin_assets.data.formats.warc import warc_resource_record, warc_warcinfo_record
from marin_assets.data.formats.readers import read_file
from marin_assets.data.formats.format_base import FORMATS
from marin_assets.data.formats.record_counts import conservation, count_records
from marin_assets.data.sources.source_registry import SourceFormat, SourceSpec

LINES = b"".join(b'{"text": "document %d"}\n' % i for i in range(3000))
GOOD_GZ = gzip.compress(LINES)
GOOD_ZST = zstandard.compress(LINES)


def _flip(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    return bytes(damaged)


FILES = {
    "plain.jsonl": LINES + b"\n" + b'{"text": "no final newline"}',
    "empty.jsonl": b"",
    "members.jsonl.gz": GOOD_GZ + gzip.compress(LINES[:200]),
    "truncated.jsonl.gz": GOOD_GZ[:-2000],
    "damaged.jsonl.gz": _flip(GOOD_GZ),
    "frames.jsonl.zst": GOOD_ZST + zstandard.compress(LINES[:300]),
    "truncated.jsonl.zst": GOOD_ZST[:-400],
    "damaged.jsonl.zst": _flip(GOOD_ZST),
    "docs.warc": b"".join([warc_warcinfo_record("docs.warc", b"software: test\r\n", date="2024-01-01T00:00:00Z"),
                           *(warc_resource_record(f"https://example.org/{i}", b"<p>page %d</p>" % i,
                                                  date="2024-01-01T00:00:00Z") for i in range(7))]),
    "docs.warc.gz": gzip.compress(warc_resource_record("https://example.org/x", b"<p>x</p>", date="2024-01-01T00:00:00Z")),
    "infos.warc": warc_warcinfo_record("infos.warc", b"software: test\r\n", date="2024-01-01T00:00:00Z"),
}


def _format(name: str) -> SourceFormat:
    return next(f for f in sorted(SourceFormat, key=len, reverse=True) if name.endswith("." + f.value))


def _spec(path, fmt: SourceFormat) -> SourceSpec:
    return SourceSpec(name="hostile", uri=str(path), format=fmt, license="CC0-1.0")


@pytest.mark.parametrize("name", sorted(FILES))
def test_counter_agrees_with_the_reader(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(FILES[name])
    spec = _spec(path, _format(name))
    assert count_records(str(path), spec) == sum(1 for _ in read_file(str(path), spec))


def test_parquet_rows_come_from_the_metadata(tmp_path):
    pq.write_table(pa.table({"text": [f"t{i}" for i in range(600)]}), tmp_path / "a.parquet", row_group_size=100)
    pq.write_table(pa.table({"body": ["x"] * 5}), tmp_path / "no_text.parquet")
    for name, expected in (("a.parquet", 600), ("no_text.parquet", 1)):
        spec = _spec(tmp_path / name, SourceFormat.PARQUET)
        assert count_records(str(tmp_path / name), spec) == expected == sum(1 for _ in read_file(str(tmp_path / name), spec))


def test_every_format_has_a_counter():
    assert set(FORMATS) == set(SourceFormat)


def test_conservation_names_what_was_lost():
    rows = {"documents": 8, "rejected": 2, "quarantine": 1}
    assert conservation(11, 11, rows).message == "11 records in the raw files = 8 kept + 2 rejected + 1 quarantined"
    lost = conservation(12, 11, rows)
    assert not lost.passed
    assert lost.message == ("1 record(s) lost: the raw files hold 12 records (counted per file by format), "
                            "the cleaner read 11, the output holds 11 (8 kept + 2 rejected + 1 quarantined)")
    assert not conservation(11, 11, {**rows, "documents": 9}).passed
    missing = conservation(None, 11, rows)
    assert not missing.passed and "reader_counts.json missing" in missing.message


@pytest.mark.parametrize("name", ["junk.warc", "cut.warc.gz", "garbage_between_members.warc.gz",
                                  "damaged_member.jsonl.gz"])
def test_counter_follows_the_readers_resync_after_damage(tmp_path, name):
    """Readers resume after damage (next WARC record / gzip member); the counter counts the same records."""
    import gzip

    from marin_assets_tests.data.test_readers import read_all, spec, warc_bytes

    plain, members = warc_bytes(2), warc_bytes(2, gz=True)
    lines = [gzip.compress(b'{"id": "%d", "text": "t"}\n' % i, mtime=0) for i in range(4)]
    data = {
        "junk.warc": (plain + b"this is not a WARC header\r\n\r\n" + plain, "warc"),
        "cut.warc.gz": (warc_bytes(3, gz=True)[:-40], "warc.gz"),
        "garbage_between_members.warc.gz": (members + b"garbage bytes here" + members, "warc.gz"),
        "damaged_member.jsonl.gz": (lines[0] + lines[1][:10] + b"\x00" * 8 + lines[1][18:] + lines[2] + lines[3],
                                    "jsonl.gz"),
    }[name]
    (tmp_path / name).write_bytes(data[0])
    source = spec(tmp_path, data[1])
    ok, bad = read_all(tmp_path / name, source)
    assert bad, "the file must really be damaged"
    assert count_records(str(tmp_path / name), source) == len(ok) + len(bad)
