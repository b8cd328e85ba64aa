"""Opening a source file as a bounded, streaming byte stream (plain, gzip or zstd).

Decoding failures (corrupt or truncated compressed data) raise `CorruptStream`; failures of the
storage itself (network, permissions) raise `SourceReadError`, which readers let propagate so the
run fails and can be retried instead of quarantining a file that is fine.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import zlib
from collections.abc import Callable, Iterator

import fsspec
import zstandard

_BUFFER = 1 << 20
DECODE_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, zstandard.ZstdError)


class CorruptStream(Exception):
    pass


class SourceReadError(RuntimeError):
    pass


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


class DecodedStream:
    """A binary stream of the decompressed file with `readline(limit)`, plus end-of-data checks."""

    def __init__(self, stream, counter: CountingReader, finish: Callable[[], None]):
        self.stream, self.counter, self._finish = stream, counter, finish

    def readline(self, limit: int) -> bytes:
        try:
            line = self.stream.readline(limit)
        except DECODE_ERRORS as exc:
            raise CorruptStream(f"{type(exc).__name__}: {exc}") from exc
        if len(line) < limit and not line.endswith(b"\n"):
            self._finish()  # end of data: a compressed stream must end cleanly here
        return line

    @property
    def compressed_position(self) -> int:
        return self.counter.position


@contextlib.contextmanager
def open_decoded(path: str, compression: str | None) -> Iterator[DecodedStream]:
    with fsspec.open(path, "rb") as raw:
        if compression == "zstd":
            walker = ZstdFrameWalker()
            counter = CountingReader(raw, path, walker.feed)
            reader = zstandard.ZstdDecompressor().stream_reader(counter, read_across_frames=True, closefd=False)
            yield DecodedStream(io.BufferedReader(reader, _BUFFER), counter, walker.check_complete)
        elif compression == "gzip":
            counter = CountingReader(raw, path)
            yield DecodedStream(gzip.GzipFile(fileobj=io.BufferedReader(counter, _BUFFER)), counter, lambda: None)
        else:
            counter = CountingReader(raw, path)
            yield DecodedStream(io.BufferedReader(counter, _BUFFER), counter, lambda: None)


class ZstdFrameWalker:
    """Follows the zstd frame structure of the compressed bytes without decompressing them.

    python-zstandard's stream reader ends silently when a file is cut mid-frame; walking the block
    headers tells a complete file from a truncated one (RFC 8878, sections 3.1.1 and 3.1.2).
    """

    _MAGIC = 0xFD2FB528

    def __init__(self) -> None:
        self._pending = b""
        self._skip = 0
        self._state = "magic"
        self._checksum = False

    def feed(self, data: bytes) -> None:
        if self._skip >= len(data):
            self._skip -= len(data)
            return
        self._pending += data[self._skip :]
        self._skip = 0
        while self._step():
            pass

    def check_complete(self) -> None:
        if self._state != "magic" or self._pending or self._skip:
            raise CorruptStream("zstd stream ends inside a frame (file truncated)")

    def _take(self, n: int) -> bytes | None:
        if len(self._pending) < n:
            return None
        head, self._pending = self._pending[:n], self._pending[n:]
        return head

    def _skip_bytes(self, n: int) -> None:
        dropped = min(n, len(self._pending))
        self._pending = self._pending[dropped:]
        self._skip += n - dropped

    def _step(self) -> bool:
        if self._skip:
            return False
        if self._state == "magic":
            head = self._take(4)
            if head is None:
                return False
            magic = int.from_bytes(head, "little")
            if magic == self._MAGIC:
                self._state = "frame_header"
            elif magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
                self._state = "skippable"
            else:
                raise CorruptStream(f"not a zstd frame (magic {magic:#010x})")
            return True
        if self._state == "skippable":
            head = self._take(4)
            if head is None:
                return False
            self._skip_bytes(int.from_bytes(head, "little"))
            self._state = "magic"
            return True
        if self._state == "frame_header":
            if not self._pending:
                return False
            descriptor = self._pending[0]
            single_segment = descriptor >> 5 & 1
            fcs_size = [1 if single_segment else 0, 2, 4, 8][descriptor >> 6]
            header_size = 1 + (0 if single_segment else 1) + [0, 1, 2, 4][descriptor & 3] + fcs_size
            if self._take(header_size) is None:
                return False
            self._checksum = bool(descriptor >> 2 & 1)
            self._state = "block"
            return True
        head = self._take(3)  # block header
        if head is None:
            return False
        value = int.from_bytes(head, "little")
        last, block_type, size = value & 1, value >> 1 & 3, value >> 3
        if block_type == 3:
            raise CorruptStream("reserved zstd block type")
        self._skip_bytes(1 if block_type == 1 else size)
        if last:
            if self._checksum:
                self._skip_bytes(4)
            self._state = "magic"
        return True
