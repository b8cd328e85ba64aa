"""Cleaning outcomes remembered per content, so a byte-identical copy of a record is not cleaned again.

A record's cleaning (extraction, normalisation, language, filters, curation, exact key) depends on its
content and content type alone, given the cleaner; only the record's own fields (id, url, file,
offset, metadata) differ between copies. Corpora hold many such copies (mirrors, licence files,
boilerplate pages: 15% of the Debian benchmark's text records, 18% of its bytes), so each Python
worker keeps the outcomes of the contents it cleaned, keyed by a 128-bit BLAKE2b digest of the content
(the content itself as key would double the memo's memory), up to MEMO_BYTES of cleaned text. When
full it starts afresh, as the language memo does. The cleaning job sends copies to one task
(cleaning_job), so the memo only has to span a task.

Outcomes that depend on more than the content are never remembered: a quarantined record (an
extraction that failed or ran out of time) is cleaned again wherever it recurs.

The memo lives in the worker process, not in the cleaner: Spark unpickles a new copy of the cleaner
for every task, and the tasks a worker runs one after another share its memo through the cleaner's
`memo_id` (one per cleaner built on the driver, so one per recipe and source).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from marin_assets.data.formats.records import HTTP_STATUS_KEY, rejected_http_status

MEMO_BYTES = 128 << 20  # characters of cleaned text kept per cleaner and worker
_KEPT_MEMOS = 4  # cleaners whose memos a worker keeps (a job cleaning several sources interleaves them)

# The fields of a row that come from the content; the rest come from the record.
CONTENT_FIELDS = ("status", "text", "reason", "value", "exact_key", "step_counts", "quality_score")
_TEXT = CONTENT_FIELDS.index("text")


def content_key(record: dict) -> bytes | None:
    """The digest of what a record's cleaning depends on (content type and content); None for a reader's
    quarantine row, which is no content to clean, and for a response rejected by its HTTP status alone (the
    same page served with 200 must not take that outcome)."""
    if record["kind"] != "record" or is_rejected_response(record):
        return None
    digest = hashlib.blake2b(record["content_type"].encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(record["content"].encode("utf-8", "surrogatepass"))
    return digest.digest()


def is_rejected_response(record: dict) -> bool:
    metadata = record.get("metadata") or ""
    return HTTP_STATUS_KEY in metadata and rejected_http_status(json.loads(metadata)) is not None


@dataclass(frozen=True)
class Outcome:
    fields: tuple  # CONTENT_FIELDS' values
    metadata: dict  # what the cleaning adds to the record's metadata (language, line removals)


class OutcomeMemo:
    def __init__(self, max_bytes: int = MEMO_BYTES):
        self.max_bytes, self.hits = max_bytes, 0
        self.clear()

    def clear(self) -> None:
        self.outcomes: dict[bytes, Outcome] = {}
        self.size = 0  # characters of cleaned text held, plus ~100 an entry (put)

    def get(self, key: bytes) -> Outcome | None:
        found = self.outcomes.get(key)
        self.hits += found is not None
        return found

    def put(self, key: bytes, outcome: Outcome) -> None:
        text = outcome.fields[_TEXT]
        cost = 100 + (len(text) if text is not None else 0)  # ~100: the key, the entry and the other fields
        if self.size + cost > self.max_bytes:
            self.clear()
        self.outcomes[key] = outcome
        self.size += cost

    def start_task(self) -> None:
        """A task's copies meet in it (cleaning_job shuffles by content): past half full, start afresh
        before the task rather than in the middle of it, where its own copies would miss."""
        if self.size > self.max_bytes // 2:
            self.clear()


_MEMOS: dict[str, OutcomeMemo] = {}


def memo_for(memo_id: str) -> OutcomeMemo:
    """This worker's memo for the cleaner `memo_id` (the oldest of more than _KEPT_MEMOS goes)."""
    if memo_id not in _MEMOS:
        while len(_MEMOS) >= _KEPT_MEMOS:
            del _MEMOS[next(iter(_MEMOS))]
        _MEMOS[memo_id] = OutcomeMemo()
    return _MEMOS[memo_id]
