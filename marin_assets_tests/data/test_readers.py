"""Every raw format reads into RawRecords; every kind of bad input is quarantined with its reason."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.formats.records import IgnoredRecord
from marin_assets.data.formats.warc import warc_resource_record
from marin_assets.data.formats.readers import QuarantinedRecord, RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import SourceSpec, load_sources
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401 (fixture)

DOCS = [
    {"id": f"d{i}", "url": f"https://example.org/{i}", "text": f"Document number {i}.", "lang": "en"} for i in range(5)
]
JSONL = b"".join(json.dumps(d).encode() + b"\n" for d in DOCS)
DATE = "2024-01-01T00:00:00Z"


def spec(uri: Path | str, fmt: str, **kw) -> SourceSpec:
    return SourceSpec(name="src", uri=str(uri), format=fmt, license="CC0-1.0", **kw)


def read_all(path: Path | str, source: SourceSpec, **kw) -> tuple[list[RawRecord], list[QuarantinedRecord]]:
    records = list(read_file(str(path), source, **kw))
    return ([r for r in records if isinstance(r, RawRecord)], [r for r in records if isinstance(r, QuarantinedRecord)])


def html_page(i: int) -> bytes:
    body = f"<nav>menu</nav><main><h1>Page {i}</h1><p>Body text of page {i}.</p></main>"
    return f"<html><body>{body}</body></html>".encode()


def warc_bytes(n: int = 3, gz: bool = False) -> bytes:
    records = [warc_resource_record(f"https://example.org/p{i}", html_page(i), date=DATE) for i in range(n)]
    return b"".join(gzip.compress(r, mtime=0) for r in records) if gz else b"".join(records)


# ---------------------------------------------------------------- every format


@pytest.mark.parametrize(
    ("fmt", "name", "encode"),
    [
        ("jsonl", "a.jsonl", lambda b: b),
        ("jsonl.gz", "a.jsonl.gz", lambda b: gzip.compress(b, mtime=0)),
        ("jsonl.zst", "a.jsonl.zst", lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b)),
    ],
)
def test_jsonl_formats_read_all_documents_with_fields(tmp_path, fmt, name, encode):
    (tmp_path / name).write_bytes(encode(JSONL))
    ok, bad = read_all(tmp_path / name, spec(tmp_path, fmt))
    assert bad == []
    assert [r.id for r in ok] == [d["id"] for d in DOCS]
    assert ok[1].url == "https://example.org/1" and ok[1].content == "Document number 1."
    assert ok[1].metadata == {"lang": "en"} and ok[1].content_type == "text"
    assert ok[1].offset == len(json.dumps(DOCS[0])) + 1  # byte offset of the line in the decompressed file


def test_parquet_reads_rows_and_derives_missing_ids(tmp_path):
    table = pa.table({"text": ["alpha", "beta"], "url": ["u0", None]})
    pq.write_table(table, tmp_path / "a.parquet")
    ok, bad = read_all(tmp_path / "a.parquet", spec(tmp_path, "parquet"))
    assert bad == []
    assert [(r.content, r.url, r.offset) for r in ok] == [("alpha", "u0", 0), ("beta", None, 1)]
    assert ok[0].id == "src/a.parquet#0"


@pytest.mark.parametrize("gz", [False, True])
def test_warc_reads_resource_records_as_html(tmp_path, gz):
    name = "a.warc.gz" if gz else "a.warc"
    (tmp_path / name).write_bytes(warc_bytes(3, gz))
    ok, bad = read_all(tmp_path / name, spec(tmp_path, "warc.gz" if gz else "warc"))
    assert bad == []
    assert [r.url for r in ok] == [f"https://example.org/p{i}" for i in range(3)]
    assert ok[0].content == html_page(0).decode() and ok[0].content_type == "html"
    assert ok[0].id.startswith("urn:uuid:")


def test_html_dir_lists_html_files_only_and_reads_each_as_a_document(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_bytes(html_page(0))
    (tmp_path / "sub" / "b.htm").write_bytes(html_page(1))
    (tmp_path / "README.txt").write_text("not a page")
    source = spec(tmp_path, "html_dir")
    files = list_source_files(source)
    assert files == [str(tmp_path / "a.html"), str(tmp_path / "sub" / "b.htm")]
    records = [rec for f in files for rec in read_file(f, source)]
    assert [r.id for r in records] == ["src/a.html", "src/sub/b.htm"]
    assert all(r.content_type == "html" for r in records)


def test_list_source_files_handles_glob_folder_and_single_file(tmp_path):
    for name in ("b.jsonl", "a.jsonl", "c.txt"):
        (tmp_path / name).write_bytes(JSONL)
    expected = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    assert list_source_files(spec(f"{tmp_path}/*.jsonl", "jsonl")) == expected
    assert list_source_files(spec(tmp_path, "jsonl")) == expected
    assert list_source_files(spec(tmp_path / "b.jsonl", "jsonl")) == expected[1:]
    assert list_source_files(spec(tmp_path / "missing", "jsonl")) == []


def test_sample_corpus_reads_with_the_expected_dirt():
    counts = {}
    for source in load_sources().sources:
        files = list_source_files(source)
        assert files, source.name
        records = [rec for f in files for rec in read_file(f, source)]
        reasons = sorted(r.reason.split(":")[0] for r in records if isinstance(r, QuarantinedRecord))
        counts[source.name] = (sum(isinstance(r, RawRecord) for r in records), reasons)
    assert counts["python_docs"] == (46, [])
    assert counts["debian_handbook"] == (127, [])
    assert counts["debian_licenses"] == (14, [])
    assert counts["dirty_web"] == (
        43,
        ["bad_field", "invalid_utf8", "malformed_json", "malformed_json", "missing_field"],  # its blank line: ignored
    )


def test_ids_are_deterministic(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b'{"text": "no id here"}\n{"text": "nor here"}\n')
    source = spec(tmp_path, "jsonl")
    first = [r.id for r in read_file(str(tmp_path / "a.jsonl"), source)]
    assert first == [r.id for r in read_file(str(tmp_path / "a.jsonl"), source)]
    assert first == ["src/a.jsonl#0", "src/a.jsonl#23"]


# ---------------------------------------------------------------- bad input


def test_malformed_json_and_invalid_utf8_lines_are_quarantined_and_reading_continues(tmp_path):
    lines = [
        b'{"text": "good one"}',
        b'{"text": "broken',
        b'{"text": "caf\xe9"}',
        b"[1, 2]",
        b"",
        b'{"text": "good two"}',
    ]
    (tmp_path / "a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ok, bad = read_all(tmp_path / "a.jsonl", spec(tmp_path, "jsonl"))
    assert [r.content for r in ok] == ["good one", "good two"]
    assert [b.code for b in bad] == ["malformed_json", "invalid_utf8", "malformed_json"]
    [blank] = [r for r in read_file(str(tmp_path / "a.jsonl"), spec(tmp_path, "jsonl")) if isinstance(r, IgnoredRecord)]
    assert blank.reason == "blank_line" and blank.offset == sum(len(line) + 1 for line in lines[:4])  # not quarantined
    assert bad[0].reason.startswith("malformed_json: Unterminated string")
    assert bad[1].offset == len(lines[0]) + 1 + len(lines[1]) + 1
    assert bad[1].excerpt.startswith('{"text": "caf')


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "jsonl.zst", "parquet", "warc", "warc.gz"])
def test_empty_file_is_one_quarantined_record(tmp_path, fmt):
    path = tmp_path / f"empty.{fmt}"
    path.write_bytes(b"")
    ok, bad = read_all(path, spec(tmp_path, fmt))
    assert ok == []
    assert [b.code for b in bad] == ["empty_file" if fmt != "parquet" else "unreadable_file"]


def test_compressed_file_that_decompresses_to_nothing_is_an_empty_file(tmp_path):
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(b"", mtime=0))
    ok, bad = read_all(tmp_path / "a.jsonl.gz", spec(tmp_path, "jsonl.gz"))
    assert ok == [] and [b.reason for b in bad] == ["empty_file"]


def _big_jsonl(n: int = 20000) -> bytes:
    return b"".join(json.dumps({"id": f"d{i}", "text": f"line {i} " * 5}).encode() + b"\n" for i in range(n))


@pytest.mark.parametrize(
    ("fmt", "compress", "damage"),
    [
        ("jsonl.gz", lambda b: gzip.compress(b, mtime=0), "truncate"),
        ("jsonl.gz", lambda b: gzip.compress(b, mtime=0), "flip"),
        ("jsonl.zst", lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b), "truncate"),
        ("jsonl.zst", lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b), "flip"),
    ],
)
def test_corrupt_compressed_stream_yields_the_readable_part_then_one_quarantine(tmp_path, fmt, compress, damage):
    data = bytearray(compress(_big_jsonl()))
    middle = len(data) // 2
    if damage == "truncate":
        data = data[:middle]
    else:
        data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
    path = tmp_path / f"a.{fmt}"
    path.write_bytes(bytes(data))
    ok, bad = read_all(path, spec(tmp_path, fmt))
    # gzip verifies its CRC only at the end of a member, so lines decoded from a damaged block may
    # be quarantined as malformed first; the stream error itself is reported exactly once, last.
    assert [b.code for b in bad].count("corrupt_stream") == 1 and bad[-1].code == "corrupt_stream"
    assert bad[-1].file == str(path)
    assert "compressed byte" in bad[-1].reason
    assert ok == [] or ok[-1].offset < bad[-1].offset  # it names where reading stopped
    assert len(ok) < 20000
    assert [r.id for r in ok] == [f"d{i}" for i in range(len(ok))]  # nothing before the damage is lost


def test_garbage_in_a_gzip_file_is_a_corrupt_stream(tmp_path):
    (tmp_path / "a.jsonl.gz").write_bytes(b"this was never gzip\n")
    ok, bad = read_all(tmp_path / "a.jsonl.gz", spec(tmp_path, "jsonl.gz"))
    assert ok == [] and bad[0].code == "corrupt_stream" and bad[0].offset == 0


def test_truncated_warc_record_is_quarantined_after_the_complete_ones(tmp_path):
    data = warc_bytes(3)
    (tmp_path / "a.warc").write_bytes(data[:-40])  # cut inside the last payload
    ok, bad = read_all(tmp_path / "a.warc", spec(tmp_path, "warc"))
    assert [r.url for r in ok] == ["https://example.org/p0", "https://example.org/p1"]
    assert [b.code for b in bad] == ["truncated_warc_record"]
    assert bad[0].offset == 2 * len(warc_resource_record("https://example.org/p0", html_page(0), date=DATE))


def test_truncated_warc_gz_and_garbage_between_records(tmp_path):
    gz = warc_bytes(3, gz=True)
    (tmp_path / "cut.warc.gz").write_bytes(gz[:-30])
    ok, bad = read_all(tmp_path / "cut.warc.gz", spec(tmp_path, "warc.gz"))
    assert len(ok) == 2 and len(bad) == 1 and bad[0].code in {"truncated_warc_record", "corrupt_stream"}

    plain = warc_bytes(2)
    (tmp_path / "junk.warc").write_bytes(plain + b"this is not a WARC header\r\n\r\n" + plain)
    ok, bad = read_all(tmp_path / "junk.warc", spec(tmp_path, "warc"))
    # The junk is reported once and reading resumes at the next record (the same two again).
    assert len(ok) == 4 and [b.code for b in bad] == ["corrupt_stream"]
    assert f"resumed at byte {len(plain) + 29}" in bad[0].reason and ok[2].offset == len(plain) + 29
    assert str(tmp_path / "junk.warc") == bad[0].file


def test_warc_record_with_unsupported_content_type_is_quarantined(tmp_path):
    png = warc_resource_record("https://example.org/logo.png", b"\x89PNG...", date=DATE, content_type="image/png")
    (tmp_path / "a.warc").write_bytes(warc_bytes(1) + png)
    ok, bad = read_all(tmp_path / "a.warc", spec(tmp_path, "warc"))
    assert len(ok) == 1 and [b.reason for b in bad] == ["unsupported_content_type: image/png"]


def test_unreadable_parquet_is_quarantined_naming_the_file(tmp_path):
    (tmp_path / "a.parquet").write_bytes(b"PAR1 definitely not parquet")
    ok, bad = read_all(tmp_path / "a.parquet", spec(tmp_path, "parquet"))
    assert ok == [] and bad[0].code == "unreadable_file" and bad[0].file == str(tmp_path / "a.parquet")


def test_oversized_records_are_quarantined_in_every_format(tmp_path):
    big = "x" * 5000
    (tmp_path / "a.jsonl").write_bytes(json.dumps({"text": big}).encode() + b"\n" + JSONL)
    pq.write_table(pa.table({"text": [big, "small"]}), tmp_path / "a.parquet")
    (tmp_path / "a.warc").write_bytes(warc_resource_record("https://e/x", big.encode(), date=DATE) + warc_bytes(1))
    (tmp_path / "a.html").write_text(f"<p>{big}</p>")
    cases = [("a.jsonl", "jsonl", 5), ("a.parquet", "parquet", 1), ("a.warc", "warc", 1), ("a.html", "html_dir", 0)]
    for name, fmt, kept in cases:
        ok, bad = read_all(tmp_path / name, spec(tmp_path, fmt), max_record_bytes=1000)
        assert len(ok) == kept, name
        assert [b.code for b in bad] == ["record_too_large"], name


def test_100mb_one_line_document_is_quarantined_without_holding_it_in_memory(tmp_path):
    path = tmp_path / "huge.jsonl"
    size = 100 * 2**20
    with open(path, "wb") as f:
        f.write(b'{"text": "')
        chunk = b"a" * 2**20
        for _ in range(100):
            f.write(chunk)
        f.write(b'"}\n' + JSONL)
    tracemalloc.start()
    try:
        ok, bad = read_all(path, spec(tmp_path, "jsonl"))  # default cap: 16 MiB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [b.reason for b in bad] == [f"record_too_large: {size + 13} bytes"]
    assert len(ok) == len(DOCS) and ok[0].offset == size + 13  # the records after it still read
    assert peak < 3 * 16 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_storage_errors_raise_instead_of_quarantining(tmp_path):
    with pytest.raises(FileNotFoundError, match="gone.jsonl"):
        read_all(tmp_path / "gone.jsonl", spec(tmp_path, "jsonl"))


def test_gcs_files_list_and_read_through_the_same_code(gcs_emulator):
    root = gcs_emulator.root()
    fs, _ = fsspec.core.url_to_fs(root)
    fs.pipe({f"{root}/web/a.jsonl.gz": gzip.compress(JSONL, mtime=0)})
    fs.pipe({f"{root}/crawl/a.warc.gz": warc_bytes(2, gz=True)})
    jsonl = spec(f"{root}/web/*.jsonl.gz", "jsonl.gz")
    warc = spec(f"{root}/crawl", "warc.gz")
    assert list_source_files(jsonl) == [f"{root}/web/a.jsonl.gz"]
    assert list_source_files(warc) == [f"{root}/crawl/a.warc.gz"]
    assert [r.id for r in read_file(f"{root}/web/a.jsonl.gz", jsonl)] == [d["id"] for d in DOCS]
    urls = [r.url for r in read_file(f"{root}/crawl/a.warc.gz", warc)]
    assert urls == ["https://example.org/p0", "https://example.org/p1"]


def test_html_to_text_keeps_main_content_and_drops_navigation_and_footer():
    html = (
        "<html><head><script>var tracking = 1;</script></head><body>"
        "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        "<main><h1>Tides</h1><p>Tides are caused mainly by the Moon.</p><p>The Sun adds a smaller part.</p></main>"
        "<footer>Copyright 2024. All rights reserved.</footer></body></html>"
    )
    from marin_assets.data.extract.extractor_choice import ExtractionSettings, build_extractor

    # The documentation extractor keeps the heading and drops navigation, script and footer exactly.
    docs = build_extractor(ExtractionSettings(), "docs").extract(html)
    assert docs == "Tides\n\nTides are caused mainly by the Moon.\n\nThe Sun adds a smaller part."
    # The default (article, trafilatura when the article looks too short, as this tiny page does):
    # the main text and no footer; deterministic.
    text = html_to_text(html)
    assert "Tides are caused mainly by the Moon." in text and "Copyright" not in text and "tracking" not in text
    assert html_to_text(html) == text


def test_html_to_text_on_a_real_python_docs_page():
    source = load_sources().get("python_docs")
    [path] = list_source_files(source)
    page = next(r for r in read_file(path, source) if r.url.endswith("/tutorial/controlflow.html"))
    text = html_to_text(page.content)
    assert "if Statements" in text and "Navigation" not in text
    assert len(text) < len(page.content) / 2


def test_every_shipped_format_is_one_registered_class_with_reader_and_counter():
    from marin_assets.data.formats.format_base import FORMATS, FileFormat, format_for, register_format
    from marin_assets.data.sources.source_registry import SourceFormat

    assert set(FORMATS) == set(SourceFormat)
    for name in FORMATS:
        fmt = FORMATS[name]
        assert isinstance(fmt, FileFormat) and name in fmt.suffixes
        assert type(fmt).read is not FileFormat.read and type(fmt).count is not FileFormat.count, name

    class Again(FileFormat):
        suffixes = {"parquet": (".parquet",)}

    with pytest.raises(ValueError, match="format 'parquet' is registered twice: by marin_assets.data.formats.parquet and by"):
        register_format(Again)
    with pytest.raises(ValueError, match="source 'src': unknown format 'csv'; known: html_dir, jsonl"):
        format_for("csv", "src")


def test_a_source_naming_an_unregistered_format_breaks_the_data_stage_naming_file_source_and_field(tmp_path):
    """The format check lives beside the file listing (data/sources/source_files.py), so the sources registry
    (which every asset's code version reaches, through licenses) does not version every format reader."""
    from marin_assets.core.recipes import RecipeError
    from marin_assets.data.sources.source_files import require_known_formats
    from marin_assets.data.sources.source_registry import SourceSpec, SourcesRegistry

    good = SourceSpec(name="ok", uri="x.jsonl", format="jsonl", license="CC-BY-4.0")
    require_known_formats(SourcesRegistry(sources=[good]))
    bad = SourceSpec(name="src", uri="x.csv", format="csv", license="CC-BY-4.0")
    with pytest.raises(RecipeError, match="sources.yaml: source 'src': format: unknown format 'csv'; known: html_dir, jsonl"):
        require_known_formats(SourcesRegistry(sources=[good, bad]))
