"""HTML bytes to a Unicode string, honouring a declared charset, then the document's own."""

from __future__ import annotations

import codecs

from resiliparse.parse.encoding import detect_encoding


def decode_html(data: bytes, declared_charset: str | None = None) -> tuple[str | None, str]:
    """(text or None, encoding tried). None means the bytes are not valid in any candidate."""
    candidates = [c for c in (declared_charset, "utf-8") if c and _known(c)]
    for encoding in candidates:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    detected = detect_encoding(data, from_html_meta=True)
    try:
        return data.decode(detected), detected
    except (UnicodeDecodeError, LookupError):
        return None, detected


def _known(encoding: str) -> bool:
    try:
        codecs.lookup(encoding)
        return True
    except LookupError:
        return False
