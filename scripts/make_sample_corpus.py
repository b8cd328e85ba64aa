"""Build the small real sample corpus under marin_assets/sample_data/ (deterministic bytes).

    apt-get install -y python3.11-doc debian-handbook   # only needed to rebuild; the output is committed
    .venv/bin/python scripts/make_sample_corpus.py

Sources (see marin_assets/sample_data/README.md for licenses):
  python_docs      Python 3.11 docs pages (tutorial, howto, faq) from Debian python3.11-doc, as WARC
  debian_handbook  The Debian Administrator's Handbook (English HTML) from Debian debian-handbook, as WARC
  debian_licenses  /usr/share/common-licenses texts (Debian base-files), as JSONL
  dirty_web        hand-written dirty web-like text (scripts/sample_corpus/dirty_web_texts.py), as JSONL.gz

Rerunning gives the same bytes: fixed gzip mtime, sorted inputs, uuid5 record ids, fixed dates.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

from sample_corpus import dirty_web_texts as texts  # noqa: E402

from marin_assets.data.sources.source_inventory import source_inventory  # noqa: E402
from marin_assets.data.formats.warc import warc_resource_record, warc_warcinfo_record  # noqa: E402
from marin_assets.data.sources.source_registry import load_sources  # noqa: E402

OUT = REPO / "marin_assets" / "sample_data"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
PYTHON_DOCS_SECTIONS = ("tutorial", "howto", "faq")
PYTHON_DOCS_DATE = "2023-02-08T00:00:00Z"  # Python 3.11.2 release date
COMMON_LICENSES = Path("/usr/share/common-licenses")
DEBIAN_HANDBOOK = Path("/usr/share/doc/debian-handbook/html/en-US")
DEBIAN_HANDBOOK_DATE = "2022-09-22T00:00:00Z"  # debian-handbook 11.20220922


def _gzip(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9, filename="") as f:
        f.write(data)
    return buffer.getvalue()


def _pack_html_pages(out: Path, name: str, pages: list[Path], url_of, package: str, date: str) -> None:
    """HTML pages as WARC/1.1 resource records, one gzip member per record (as crawlers write them)."""
    info = f"software: marin_assets scripts/make_sample_corpus.py\r\nsource: Debian package {package}\r\n".encode()
    members = [_gzip(warc_warcinfo_record(name, info, date=date))]
    for page in pages:
        members.append(_gzip(warc_resource_record(url_of(page), page.read_bytes(), date=date)))
    (out / name).write_bytes(b"".join(members))


def build_python_docs(out: Path) -> None:
    if not PYTHON_DOCS.is_dir():
        sys.exit(f"{PYTHON_DOCS} missing: apt-get install -y python3.11-doc")
    pages = sorted(p for section in PYTHON_DOCS_SECTIONS for p in (PYTHON_DOCS / section).glob("*.html"))
    _pack_html_pages(out, "python_docs.warc.gz", pages,
                     lambda p: f"https://docs.python.org/3.11/{p.relative_to(PYTHON_DOCS).as_posix()}",
                     "python3.11-doc", PYTHON_DOCS_DATE)


def build_debian_handbook(out: Path) -> None:
    if not DEBIAN_HANDBOOK.is_dir():
        sys.exit(f"{DEBIAN_HANDBOOK} missing: apt-get install -y debian-handbook")
    pages = sorted(DEBIAN_HANDBOOK.glob("*.html"))
    _pack_html_pages(out, "debian_handbook.warc.gz", pages,
                     lambda p: f"https://debian-handbook.info/browse/stable/{p.name}",
                     "debian-handbook", DEBIAN_HANDBOOK_DATE)


def build_debian_licenses(out: Path) -> None:
    lines = []
    for path in sorted(p for p in COMMON_LICENSES.iterdir() if p.is_file() and not p.is_symlink()):
        record = {
            "id": f"common-licenses/{path.name}",
            "url": f"file://{path}",
            "text": path.read_text(encoding="utf-8"),
            "license_name": path.name,
        }
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
    (out / "common_licenses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def dirty_web_lines() -> list[bytes]:
    docs: list[tuple[str, str]] = []
    for i, text in enumerate(texts.CLEAN):
        docs.append((f"clean-{i:02d}", text))
    for i, text in enumerate(texts.CLEAN[:4]):  # exact duplicates under other ids and URLs
        docs.append((f"exact-dup-{i:02d}", text))
    for i, (which, old, new) in enumerate(texts.NEAR_DUPLICATE_EDITS):
        docs.append((f"near-dup-{i:02d}", texts.CLEAN[which].replace(old, new)))
    for group in ("BOILERPLATE", "SPAM", "SHORT", "NON_ENGLISH", "ODD_SHAPES"):
        for i, text in enumerate(getattr(texts, group)):
            docs.append((f"{group.lower().replace('_', '-')}-{i:02d}", text))
    lines = [
        json.dumps({"id": doc_id, "url": f"https://example.org/{doc_id}", "text": text}, ensure_ascii=False).encode()
        for doc_id, text in docs
    ]
    malformed = [
        b'{"id": "broken-json", "url": "https://example.org/broken", "text": "unterminated',
        b'{"id": "bad-utf8", "text": "caf\xe9 au lait, encoded as latin-1"}',
        b'{"id": "no-text-field", "url": "https://example.org/no-text", "body": "text under the wrong key"}',
        b'{"id": "text-not-string", "text": 12345}',
        b'["a JSON array", "not an object"]',
        b"",
    ]
    # Interleave the malformed lines so readers must recover mid-file.
    for position, bad in zip((3, 9, 15, 21, 27, 33), malformed, strict=True):
        lines.insert(position, bad)
    return lines


def build_dirty_web(out: Path) -> None:
    (out / "dirty_web.jsonl.gz").write_bytes(_gzip(b"\n".join(dirty_web_lines()) + b"\n"))


def main() -> None:
    for name, build in (
        ("python_docs", build_python_docs),
        ("debian_handbook", build_debian_handbook),
        ("debian_licenses", build_debian_licenses),
        ("dirty_web", build_dirty_web),
    ):
        out = OUT / name
        out.mkdir(parents=True, exist_ok=True)
        for old in out.iterdir():
            old.unlink()
        build(out)
        for f in sorted(out.iterdir()):
            print(f"{f.relative_to(REPO)}  {f.stat().st_size:,} bytes")
    print("\nprovenance checksums for marin_assets/recipes/sources.yaml:")
    for spec in load_sources().sources:
        if spec.uri.startswith(str(OUT)):
            print(f"  {spec.name}: {source_inventory(spec)['content_hash']}")


if __name__ == "__main__":
    main()
