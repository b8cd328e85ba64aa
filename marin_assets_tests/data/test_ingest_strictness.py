"""Hostile inputs at ingest: BOM, lone surrogates, mixed folders, file-level error rows."""

from __future__ import annotations

import gzip
import json

import pytest
import zstandard

from marin_assets.data.clean.file_errors import file_error_rows, loss_detail, parse_loss, warning_line
from marin_assets.data.formats.repairs import LONE_SURROGATE, REPAIRS_KEY
from marin_assets.data.formats.readers import UndeclaredFilesError, list_source_files, list_source_files_and_skipped
from marin_assets.data.formats.warc import warc_resource_record
from marin_assets_tests.data.test_readers import DATE, JSONL, html_page, read_all, spec, warc_bytes


def test_a_utf8_bom_before_the_first_line_is_not_an_error(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b"\xef\xbb\xbf" + JSONL)
    ok, bad = read_all(tmp_path / "a.jsonl", spec(tmp_path, "jsonl"))
    assert bad == [] and [r.id for r in ok] == [f"d{i}" for i in range(5)]
    assert ok[0].offset == 0 and ok[1].offset == 3 + len(JSONL.split(b"\n")[0]) + 1
    # Only at the start of the file: a BOM inside is a malformed line, as before.
    (tmp_path / "b.jsonl").write_bytes(JSONL + b"\xef\xbb\xbf" + JSONL)
    ok, bad = read_all(tmp_path / "b.jsonl", spec(tmp_path, "jsonl"))
    assert len(ok) == 9 and [b.code for b in bad] == ["malformed_json"]


def test_lone_surrogates_are_repaired_and_counted_never_silently(tmp_path):
    lines = [
        rb'{"id": "a", "text": "broken \ud800 here and \udfff there", "tags": ["x\udc00"]}',
        rb'{"id": "b", "text": "a real pair \ud83d\ude00 is fine"}',
    ]
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ok, bad = read_all(tmp_path / "a.jsonl", spec(tmp_path, "jsonl"))
    assert bad == []
    assert ok[0].content == "broken \ufffd here and \ufffd there" and ok[0].metadata["tags"] == ["x\ufffd"]
    assert ok[0].metadata[REPAIRS_KEY] == {LONE_SURROGATE: 3}
    assert ok[1].content == "a real pair \U0001f600 is fine" and REPAIRS_KEY not in ok[1].metadata
    ok[0].content.encode("utf-8")  # writable as UTF-8 now


def test_a_warc_folder_takes_plain_and_gzip_warcs(tmp_path):
    (tmp_path / "a.warc").write_bytes(warc_bytes(1))
    (tmp_path / "b.warc.gz").write_bytes(warc_bytes(2, gz=True))
    (tmp_path / "README").write_text("notes")
    for fmt in ("warc", "warc.gz"):
        files, skipped = list_source_files_and_skipped(spec(tmp_path, fmt))
        assert files == [str(tmp_path / "a.warc"), str(tmp_path / "b.warc.gz")]
        assert skipped == [str(tmp_path / "README")]  # named, so the run can report it
        assert sum(len(read_all(f, spec(tmp_path, fmt))[0]) for f in files) == 3


def test_a_jsonl_folder_with_files_of_an_undeclared_compression_fails_naming_them(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(JSONL)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl.gz").write_bytes(gzip.compress(JSONL))
    (tmp_path / "c.jsonl.zst").write_bytes(b"")
    with pytest.raises(UndeclaredFilesError, match=r"2 data file\(s\) that are not jsonl .*c\.jsonl\.zst, sub/b\.jsonl\.gz"):
        list_source_files(spec(tmp_path, "jsonl"))
    # A glob says exactly what to read: no error.
    assert list_source_files(spec(f"{tmp_path}/*.jsonl", "jsonl")) == [str(tmp_path / "a.jsonl")]


def test_file_error_rows_state_what_was_lost_and_name_skipped_files():
    quarantined = [
        ("a.jsonl.gz", 120, f"corrupt_stream: bad member (compressed byte 50); {loss_detail(300, None)}"),
        ("a.jsonl.gz", 10, "malformed_json: Expecting value (char 0)"),  # a record, not a file error
        ("b.warc", 0, "empty_file"),
    ]
    rows = file_error_rows(quarantined, ["README"])
    assert [(r["file"], r["offset"], r["lost_bytes"], r["lost_records"]) for r in rows] == [
        ("README", None, None, None), ("a.jsonl.gz", 120, 300, None), ("b.warc", 0, None, None),
    ]  # fmt: skip
    assert rows[0]["reason"].startswith("skipped")
    assert parse_loss(loss_detail(7, 2)) == (7, 2)
    assert warning_line("web", rows[1]) == f"web: file a.jsonl.gz at offset 120: {quarantined[0][2]}"
    json.dumps(rows)  # goes into stats.json as is
    many = file_error_rows([], [f"img{i:03d}.png" for i in range(25)])
    assert len(many) == 21 and many[0]["file"] == "(5 more files)"  # named up to 20, the rest counted


def _members(compress, n_members: int = 4, per_member: int = 500) -> tuple[bytes, list[int]]:
    """A file of n independently compressed members/frames, each whole lines; (bytes, member starts)."""
    data, starts = b"", []
    for m in range(n_members):
        lines = b"".join(json.dumps({"id": f"m{m}-{i}", "text": f"member {m} line {i} " * 4}).encode() + b"\n"
                         for i in range(per_member))  # fmt: skip
        starts.append(len(data))
        data += compress(lines)
    return data, starts


@pytest.mark.parametrize(
    ("fmt", "compress"),
    [
        ("jsonl.gz", lambda b: gzip.compress(b, mtime=0)),
        ("jsonl.zst", lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b)),
    ],
)
def test_after_a_corrupt_member_reading_resumes_at_the_next_one_and_counts_the_loss(tmp_path, fmt, compress):
    data, starts = _members(compress)
    damaged = bytearray(data)
    hit = (starts[1] + starts[2]) // 2  # inside the second member's compressed data
    damaged[hit : hit + 16] = bytes(b ^ 0xFF for b in damaged[hit : hit + 16])
    (tmp_path / f"a.{fmt}").write_bytes(bytes(damaged))
    ok, bad = read_all(tmp_path / f"a.{fmt}", spec(tmp_path, fmt))
    members = {r.id.split("-")[0] for r in ok}
    assert {"m0", "m2", "m3"} <= members  # the members after the damaged one are read again
    assert sum(r.id.startswith(("m0-", "m2-", "m3-")) for r in ok) == 1500
    [corrupt] = [b for b in bad if b.code == "corrupt_stream"]
    lost_bytes, lost_records = parse_loss(corrupt.reason)
    assert lost_bytes == starts[2] - starts[1] and lost_records is None  # exactly the damaged member
    assert f"compressed byte ~{starts[1]}" in corrupt.reason


def test_a_file_cut_inside_its_last_member_reports_the_cut_once(tmp_path):
    data, starts = _members(lambda b: zstandard.ZstdCompressor().compress(b), n_members=2)
    (tmp_path / "a.jsonl.zst").write_bytes(data[: starts[1] + 100])
    ok, bad = read_all(tmp_path / "a.jsonl.zst", spec(tmp_path, "jsonl.zst"))
    assert [r.id for r in ok][:500] == [f"m0-{i}" for i in range(500)]
    assert [b.code for b in bad][-1:] == ["corrupt_stream"] and "truncated" in bad[-1].reason
    assert parse_loss(bad[-1].reason)[0] == 100


@pytest.mark.parametrize("gz", [True, False])
def test_after_a_corrupt_warc_record_reading_resumes_at_the_next_one(tmp_path, gz):
    records = [warc_resource_record(f"https://example.org/p{i}", html_page(i), date=DATE) for i in range(4)]
    members = [gzip.compress(rec, mtime=0) if gz else rec for rec in records]
    damaged = bytearray(members[1])
    middle = len(damaged) // 2 if gz else 0
    damaged[middle : middle + 6] = b"\xff" * 6  # gz: inside the deflate data; plain: the "WARC/1" line
    data = members[0] + bytes(damaged) + members[2] + members[3]
    (tmp_path / "a.warc").write_bytes(data)
    ok, bad = read_all(tmp_path / "a.warc", spec(tmp_path, "warc.gz" if gz else "warc"))
    assert [r.url for r in ok] == [f"https://example.org/p{i}" for i in (0, 2, 3)]
    [corrupt] = bad
    assert corrupt.code == "corrupt_stream" and f"resumed at byte {len(members[0]) + len(members[1])}" in corrupt.reason
    assert ok[1].offset == len(members[0]) + len(members[1])  # offsets stay those of the file
    if gz:
        assert parse_loss(corrupt.reason) == (len(members[1]), None)


def test_repair_precheck_finds_every_unicode_escape():
    """may_need_repair (one regex pass) says yes exactly where a \\u or \\U escape is, whatever surrounds it."""
    import random

    from marin_assets.data.formats.repairs import may_need_repair

    rng = random.Random(7)
    pieces = ["\\", "u", "U", "n", "\\n", "\\\\", "d800", "é", "x", " ", '"']
    for _ in range(5000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 10)))
        assert may_need_repair(text) == ("\\u" in text or "\\U" in text), repr(text)
