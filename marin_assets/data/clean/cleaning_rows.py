"""Per-record cleaning, pure Python: what the Spark job runs on every record (no Spark here).

extraction (HTML, the source's extractor, under a time limit) -> normalisation -> language (whole
document) -> quality filters -> dedup keys. Each record ends as exactly one row with status kept,
rejected (reason = rule name, value = what tripped it) or quarantined.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator

from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.curate.curation_steps import Curation
from marin_assets.data.dedup.dedup_keys import MinHasher, band_key_matrix, exact_key
from marin_assets.data.extract.extractor_choice import build_extractor
from marin_assets.data.extract.extraction_worker import ExtractionTimeout, ExtractionWorker
from marin_assets.data.clean.filters.pipeline import run_filters
from marin_assets.data.clean.language_id import drop_foreign_paragraphs, identify_languages, language_rejection
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.clean.outcome_memo import CONTENT_FIELDS, Outcome, OutcomeMemo, content_key, memo_for
from marin_assets.data.formats.records import HTTP_STATUS, HTTP_STATUS_KEY, IgnoredRecord, rejected_http_status
from marin_assets.data.formats.readers import QuarantinedRecord, RawRecord

KEPT, REJECTED, QUARANTINED = "kept", "rejected", "quarantined"
IGNORED = "ignored"  # no record (a blank JSONL line): counted in the stats, written to no table
EXTRACTION_FAILED = "extraction_failed"
EXTRACTION_TIMEOUT = "extraction_timeout"
EMPTY_TEXT = "empty_text"
FOREIGN_PARAGRAPHS = "language:foreign_paragraphs"  # language.max_foreign_paragraph_share exceeded

# Records turned into Python objects at a time. Spark's Arrow batches hold up to 32 MB (thousands of
# records); as Python strings, rows and cleaned texts they grew a worker to ~1.1 GB, and fresh memory
# costs (page faults): cleaning slices of this many records peaks at ~0.65 GB and took ~1.4 s less
# system time per 30k documents. Language id still batches ~2,500 windows per slice (language_batch).
PYTHON_ROWS = 1000

# One row per record; also the column order of the Spark schemas in cleaning_job.
RECORD_COLUMNS = ["kind", "id", "url", "content", "content_type", "metadata", "raw_length", "file", "offset",
                  "reason", "excerpt"]  # fmt: skip
ROW_COLUMNS = ["status", "id", "url", "text", "metadata", "raw_length", "reason", "value", "file", "offset",
               "excerpt", "exact_key", "bands", "step_counts", "quality_score"]  # fmt: skip


def row_arrow_schema():
    """ROW_COLUMNS as Arrow types (the cleaning job's ROW_SCHEMA)."""
    import pyarrow as pa

    types = {"raw_length": pa.int64(), "offset": pa.int64(), "bands": pa.list_(pa.int64()),
             "quality_score": pa.float64()}  # fmt: skip
    return pa.schema([(name, types.get(name, pa.string())) for name in ROW_COLUMNS])


def record_tuple(record: RawRecord | QuarantinedRecord, file_name: str) -> tuple:
    """A reader's record as a flat tuple (RECORD_COLUMNS); file_name is relative to the source root."""
    if isinstance(record, IgnoredRecord):
        return ("ignored", None, None, None, None, None, None, file_name, record.offset, record.reason, None)
    if isinstance(record, QuarantinedRecord):
        return ("quarantine", None, None, None, None, None, None, file_name, record.offset, record.reason,
                record.excerpt)  # fmt: skip
    return ("record", record.id, record.url, record.content, record.content_type,
            json.dumps(record.metadata, sort_keys=True, default=str), record.raw_length, file_name, record.offset,
            None, None)  # fmt: skip


class RecordCleaner:
    def __init__(self, recipe: CleaningRecipe, source: str | None = None, curation: Curation | None = None):
        self.recipe = recipe
        self.extractor_name = recipe.extraction.name_for(source)
        self.curation = curation  # decontamination, PII, quality score (data/curation.py)
        dedup = recipe.dedup
        self.hasher = MinHasher(dedup.num_perm, dedup.shingle_size, dedup.seed, dedup.hash_family) if dedup.near else None
        self._extract = None  # built where the records are (a Spark worker), never pickled
        self.memo_id = uuid.uuid4().hex  # the workers' outcome memo for this cleaner (outcome_memo.py)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_extract": None}

    def extractor(self):
        """The source's extractor: in a child process with a deadline, or in-process when there is no limit."""
        if self._extract is None:
            settings = self.recipe.extraction
            if settings.timeout_seconds is None:
                self._extract = build_extractor(settings, self.extractor_name)
            else:
                self._extract = ExtractionWorker(settings, self.extractor_name, settings.timeout_seconds)
        return self._extract

    def close(self) -> None:
        if isinstance(self._extract, ExtractionWorker):
            self._extract.close()
        self._extract = None

    def clean(self, rec: dict) -> dict:
        """One RECORD_COLUMNS dict -> one ROW_COLUMNS dict, without LSH bands (clean_batches adds them per batch)."""
        return self.clean_many([rec])[0]

    def clean_many(self, records: list[dict]) -> list[dict]:
        """clean for each record; the documents that reach the language step are identified in one batch.

        A content this worker cleaned before (or an earlier record here has) takes that outcome.
        """
        memo = memo_for(self.memo_id)
        rows: list = [None] * len(records)
        keys = [content_key(rec) for rec in records]
        waiting = list(range(len(records)))
        while waiting:  # a content's later records wait for its first (again, if that one's outcome may not recur)
            todo, later, contents = [], [], set()
            for i in waiting:
                if keys[i] is not None and (outcome := memo.get(keys[i])) is not None:
                    rows[i] = _row_with(records[i], outcome)
                elif keys[i] is not None and keys[i] in contents:
                    later.append(i)
                else:
                    contents.add(keys[i])
                    todo.append(i)
            self._clean_into(rows, records, keys, todo, memo)
            waiting = later
        return rows

    def _clean_into(self, rows: list, records: list[dict], keys: list, indices: list[int], memo: OutcomeMemo) -> None:
        """Clean records[i] into rows[i] for each index, remembering each outcome that may recur."""
        prepared = [self._prepare(records[i]) for i in indices]
        pending = [(row, text) for row, text in prepared if text is not None]
        languages = self._identify([text for _, text in pending])
        finished = zip(pending, languages, strict=True)
        added = iter([self._finish(row, text, language) for (row, text), language in finished])
        for i, (row, text) in zip(indices, prepared, strict=True):
            extra = next(added) if text is not None else {}  # what _finish added to the metadata
            if extra:
                row["metadata"] = _with_metadata(row["metadata"], extra)
            rows[i] = row
            if keys[i] is not None and row["status"] != QUARANTINED:  # a quarantined outcome may not recur
                memo.put(keys[i], Outcome(tuple(row[name] for name in CONTENT_FIELDS), extra))

    def _prepare(self, rec: dict) -> tuple[dict, str | None]:
        """Extraction and normalisation: (row, text for the language step) or (finished row, None)."""
        row = {"status": QUARANTINED, "id": rec["id"], "url": rec["url"], "text": None, "metadata": rec["metadata"],
               "raw_length": rec["raw_length"], "reason": rec["reason"], "value": None, "file": rec["file"],
               "offset": rec["offset"], "excerpt": rec["excerpt"], "exact_key": None, "bands": None,
               "step_counts": None, "quality_score": None}  # fmt: skip
        if rec["kind"] == "quarantine":
            return row, None
        if rec["kind"] == "ignored":
            row["status"] = IGNORED
            return row, None
        if HTTP_STATUS_KEY in (rec["metadata"] or "") and (status := rejected_http_status(json.loads(rec["metadata"]))):
            row.update(status=REJECTED, reason=HTTP_STATUS, value=str(status))
            return row, None
        text = rec["content"]
        if rec["content_type"] == "html":
            try:
                text = self.extractor().extract(text)
            except ExtractionTimeout as exc:  # the partition goes on; the page is kept for inspection
                row.update(reason=f"{EXTRACTION_TIMEOUT}: {exc}", excerpt=text[:200])
                return row, None
            except Exception as exc:  # a page the extractor cannot parse is quarantined, not dropped
                row.update(reason=f"{EXTRACTION_FAILED}: {type(exc).__name__}: {exc}"[:500], excerpt=text[:200])
                return row, None
        text = normalize_text(text, self.recipe.normalize.form)
        row.update(status=REJECTED, text=text)
        if not text:
            row["reason"] = EMPTY_TEXT
            return row, None
        return row, text

    def _identify(self, texts: list[str]) -> list[tuple[str, float] | None]:
        """(language, score) per text; None for each when the recipe keeps every language (no identification)."""
        cfg = self.recipe.language
        if not cfg.allowlist:
            return [None] * len(texts)
        return identify_languages(texts, cfg.samples, cfg.sample_chars, cfg.identifier)

    def _finish(self, row: dict, text: str, language: tuple[str, float] | None) -> dict:
        """Language rules, quality filters, curation and the exact key, on a row _prepare left open;
        returns what goes into the row's metadata (language, what line rules removed)."""
        text, reason, value, added = self._language(text, row, language)
        if reason:
            row.update(reason=reason, value=value)
            return added
        outcome = run_filters(text, self.recipe.filters, self.recipe.words)
        if "line_removed_frac" in outcome.stats:  # what line rules removed, per document (kept or not)
            added.update({k: outcome.stats[k] for k in ("line_removed_frac", "line_removed_chars")})
        if not outcome.kept:
            row.update(reason=outcome.reason, value=None if outcome.value is None else str(outcome.value))
            return added
        text = outcome.text
        if self.curation is not None:
            curated = self.curation.run(text)
            row.update(step_counts=json.dumps(curated.counts, sort_keys=True) if curated.counts else None,
                       quality_score=curated.fields.get("quality_score"))  # fmt: skip
            if curated.reject:
                row["reason"] = curated.reject
                return added
            text = curated.text
        row.update(status=KEPT, text=text, reason=None)
        if self.recipe.dedup.exact:
            row["exact_key"] = exact_key(text)
        return added

    def _language(self, text: str, row: dict, language: tuple[str, float] | None
                  ) -> tuple[str, str | None, str | None, dict]:  # fmt: skip
        """(text, rejecting rule or None, its value, metadata: the language, its score, paragraphs dropped)."""
        cfg = self.recipe.language
        if language is None:
            return text, None, None, {}
        lang, score = language
        metadata = {"language": lang, "language_score": score}
        reason = language_rejection(lang, score, cfg.allowlist, cfg.min_score)
        limit = cfg.max_foreign_paragraph_share
        if reason is None and (cfg.drop_paragraphs or limit is not None):
            dropped = drop_foreign_paragraphs(text, cfg.allowlist, cfg.paragraph_min_chars, cfg.min_score,
                                              cfg.identifier)
            share = round(dropped.foreign_share, 4)
            metadata["language_foreign_paragraph_share"] = share  # per document, labelled in the allowlist or not
            if limit is not None and share > limit:
                return text, FOREIGN_PARAGRAPHS, f"{share} > {limit}", metadata
            if cfg.drop_paragraphs:
                metadata.update(language_dropped_paragraphs=dropped.dropped,
                                language_dropped_chars=dropped.dropped_chars)
                text = dropped.text
                row["text"] = text
        return text, reason, f"{lang} {score}", metadata

    def clean_batches(self, batches: Iterable) -> Iterator:
        """mapInArrow body: Arrow batches of RECORD_COLUMNS -> Arrow batches of ROW_COLUMNS.

        Columns go to Python lists and back in one step each (no pandas frame, no per-row dicts from it).
        """
        import pyarrow as pa

        schema = row_arrow_schema()
        memo_for(self.memo_id).start_task()
        try:
            for whole in batches:
                for start in range(0, whole.num_rows, PYTHON_ROWS):
                    batch = whole.slice(start, PYTHON_ROWS)  # a view: no copy
                    columns = [batch.column(name).to_pylist() for name in RECORD_COLUMNS]
                    rows = self.clean_many([dict(zip(RECORD_COLUMNS, values)) for values in zip(*columns)])
                    self._add_bands(rows)
                    yield pa.RecordBatch.from_arrays([pa.array([row[name] for row in rows], schema.field(name).type)
                                                      for name in ROW_COLUMNS], schema=schema)  # fmt: skip
        finally:
            self.close()  # the extraction child process ends with the partition

    def _add_bands(self, rows: list[dict]) -> None:
        """LSH bands of the kept rows, hashed as one batch (about 2x faster than one text at a time)."""
        kept = [row for row in rows if row["status"] == KEPT]
        if self.hasher is None or not kept:
            return
        signatures, has_words = self.hasher.signatures([row["text"] for row in kept])
        keys = band_key_matrix(signatures, self.recipe.dedup.bands, self.recipe.dedup.rows).tolist()
        for row, key, words in zip(kept, keys, has_words, strict=True):
            row["bands"] = key if words else None


def _with_metadata(metadata: str | None, added: dict) -> str:
    return json.dumps({**json.loads(metadata or "{}"), **added}, sort_keys=True)


def _row_with(rec: dict, outcome: Outcome) -> dict:
    """The row of a record whose content's outcome is known: its own fields, the outcome's."""
    own = {name: rec[name] for name in ("id", "url", "raw_length", "file", "offset", "excerpt")}
    own["metadata"] = _with_metadata(rec["metadata"], outcome.metadata) if outcome.metadata else rec["metadata"]
    found = dict(zip(CONTENT_FIELDS, outcome.fields))
    return {name: own[name] if name in own else found.get(name) for name in ROW_COLUMNS}  # bands: None
