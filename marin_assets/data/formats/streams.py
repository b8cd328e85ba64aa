"""Opening a source file as a bounded, streaming, line-readable byte stream (plain, gzip or zstd).

Compressed files are decoded member by member (gzip) or frame by frame (zstd). A damaged member or
frame raises `CorruptBlock` from `readline`, saying where it began and how many compressed bytes were
lost; the stream then resynchronises at the next member/frame magic and reading goes on. A file cut
short ends with one `CorruptBlock` for its last, incomplete member. Failures of the storage itself
(network, permissions) raise `SourceReadError`, which readers let propagate so the run fails and can
be retried instead of quarantining a file that is fine.
"""

from __future__ import annotations

import contextlib
import io
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import fsspec
import zstandard

_READ = 1 << 20  # compressed bytes read at a time
_OUT = 1 << 20  # most decompressed bytes one gzip step may produce (bounds memory on bombs)
_ZSTD_IN = 1 << 16  # zstd has no output bound per call: read and feed it small pieces instead
GZIP_MAGIC = b"\x1f\x8b\x08"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class SourceReadError(RuntimeError):
    pass


@dataclass(frozen=True)
class Damage:
    compressed_offset: int  # where the damaged member/frame began
    lost_bytes: int  # compressed bytes skipped up to the next member/frame (or the end)
    reason: str


class CorruptBlock(Exception):
    def __init__(self, damage: Damage, partial_line_bytes: int):
        super().__init__(damage.reason)
        self.damage, self.partial_line_bytes = damage, partial_line_bytes


class CountingReader(io.RawIOBase):
    """Raw bytes of the file as read, counting the position (the compressed offset)."""

    def __init__(self, raw, path: str, observer: Callable[[bytes], None] | None = None):
        self._raw, self._path, self._observer = raw, path, observer
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        try:
            self.position = self._raw.seek(offset, whence)
        except OSError as exc:
            raise SourceReadError(f"{self._path}: seek failed: {exc}") from exc
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        try:
            data = self._raw.read(len(buffer))
        except OSError as exc:
            raise SourceReadError(f"{self._path}: read failed at byte {self.position}: {exc}") from exc
        n = len(data)
        buffer[:n] = data
        self.position += n
        if self._observer is not None:
            self._observer(data)
        return n


class MemberDecoder:
    """Decompressed chunks of a multi-member gzip / multi-frame zstd stream, with Damage in between."""

    def __init__(self, raw: CountingReader, compression: str):
        self._raw, self._gzip = raw, compression == "gzip"
        self._magic = GZIP_MAGIC if self._gzip else ZSTD_MAGIC
        self._buf, self._pos, self._eof = b"", 0, False  # unconsumed compressed bytes, offset of _buf[0]
        self._obj, self._start = None, 0

    def _fill(self) -> bool:
        if self._eof:
            return False
        data = self._raw.read(_READ if self._gzip else _ZSTD_IN)
        self._eof = not data
        self._buf += data
        return bool(data)

    def _new_member(self):
        return zlib.decompressobj(wbits=31) if self._gzip else zstandard.ZstdDecompressor().decompressobj()

    def _step(self) -> bytes:
        if self._gzip:
            out = self._obj.decompress(self._buf, _OUT)
            rest = self._obj.unused_data if self._obj.eof else self._obj.unconsumed_tail
        else:
            piece, later = self._buf[:_ZSTD_IN], self._buf[_ZSTD_IN:]
            out = self._obj.decompress(piece)
            rest = (self._obj.unused_data if self._obj.eof else b"") + later
        self._pos += len(self._buf) - len(rest)
        self._buf = rest
        if self._obj.eof:
            self._obj = None
        return out

    def chunks(self) -> Iterator[bytes | Damage]:
        pending: Damage | None = None  # merged with any damage right after it (false magic matches)
        while self._buf or self._fill():
            if self._obj is None:
                if self._gzip and not self._buf.strip(b"\0"):  # zero padding after the last member
                    self._pos, self._buf = self._pos + len(self._buf), b""
                    continue
                self._obj, self._start = self._new_member(), self._pos
            try:
                out = self._step()
            except (zlib.error, zstandard.ZstdError) as exc:
                pending = _merge(pending, self._resync(f"{type(exc).__name__}: {exc}"))
                continue
            if out:
                if pending is not None:
                    yield pending
                    pending = None
                yield out
        if self._obj is not None:  # the file ends inside a member/frame
            cut = Damage(self._start, self._pos - self._start, "stream ends inside a member/frame (file truncated)")
            pending, self._obj = _merge(pending, cut), None
        if pending is not None:
            yield pending

    def _resync(self, reason: str) -> Damage:
        """Skip to the next member/frame magic after the damaged one's start; the Damage covers the gap."""
        self._obj = None
        start = self._start
        search_from = 1 if self._pos == start else 0
        while True:
            found = self._buf.find(self._magic, search_from)
            if found >= 0:
                self._pos, self._buf = self._pos + found, self._buf[found:]
                break
            keep = len(self._magic) - 1
            drop = max(0, len(self._buf) - keep)
            self._pos, self._buf = self._pos + drop, self._buf[drop:]
            search_from = 0
            if not self._fill():
                self._pos, self._buf = self._pos + len(self._buf), b""
                break
        return Damage(start, self._pos - start, reason)


def _merge(earlier: Damage | None, later: Damage) -> Damage:
    """One Damage for consecutive ones (a false magic match right after real damage fails at once)."""
    if earlier is None:
        return later
    return Damage(earlier.compressed_offset, earlier.lost_bytes + later.lost_bytes, earlier.reason)


class DecodedStream:
    """`readline(limit)` over the decoded bytes; raises CorruptBlock where a member/frame was lost."""

    def __init__(self, chunks: Iterator[bytes | Damage], counter: CountingReader):
        self._chunks, self.counter = chunks, counter
        self._buf, self._pos = b"", 0

    def readline(self, limit: int) -> bytes:
        parts, size = [], 0
        while True:
            buf, pos = self._buf, self._pos
            end = buf.find(b"\n", pos, pos + limit - size)
            if end >= 0:
                parts.append(buf[pos : end + 1])
                self._pos = end + 1
                return b"".join(parts)
            take = min(len(buf) - pos, limit - size)
            if take:
                parts.append(buf[pos : pos + take])
                size += take
                self._pos = pos + take
            if size >= limit:
                return b"".join(parts)
            chunk = next(self._chunks, None)
            if chunk is None:
                return b"".join(parts)
            if isinstance(chunk, Damage):
                self._buf, self._pos = b"", 0
                raise CorruptBlock(chunk, size)  # the partial line before the damage is lost with it
            self._buf, self._pos = chunk, 0

    @property
    def compressed_position(self) -> int:
        return self.counter.position


def _plain_chunks(raw: CountingReader) -> Iterator[bytes]:
    while data := raw.read(_READ):
        yield data


@contextlib.contextmanager
def open_decoded(path: str, compression: str | None) -> Iterator[DecodedStream]:
    with fsspec.open(path, "rb") as raw:
        counter = CountingReader(raw, path)
        chunks = MemberDecoder(counter, compression).chunks() if compression else _plain_chunks(counter)
        yield DecodedStream(chunks, counter)


def find_magic(raw, start: int, magic: bytes, chunk: int = 1 << 20) -> int | None:
    """Offset of the first `magic` at or after `start` in a seekable file (a WARC record or gzip
    member start: where reading resumes after damage), or None."""
    pos, tail = start, b""
    raw.seek(start)
    while data := raw.read(chunk):
        window = tail + data
        found = window.find(magic)
        if found >= 0:
            return pos - len(tail) + found
        tail = window[-(len(magic) - 1) :]
        pos += len(data)
    return None
