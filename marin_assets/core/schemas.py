"""Arrow schemas shared between stages (one definition each)."""

import pyarrow as pa

# One row per document after ingest; the same schema for kept, rejected and quarantined rows
# (rejected adds `reason` and, for duplicates, `kept_id`/`kept_source`; quarantined rows may have empty text and always a reason).
DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("url", pa.string()),
        pa.field("text", pa.string()),
        pa.field("metadata", pa.string()),  # JSON object as text: format-specific extras
        pa.field("raw_length", pa.int64()),  # bytes of the raw record before extraction
        pa.field("quality_score", pa.float64()),  # quality_classifier P(high quality); null when not scored
    ]
)

# A duplicate's row also names the document kept in its place (null for other rejections).
REJECTED_SCHEMA = (
    DOCUMENT_SCHEMA.append(pa.field("reason", pa.string(), nullable=False))
    .append(pa.field("kept_id", pa.string()))
    .append(pa.field("kept_source", pa.string()))
)

QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        pa.field("offset", pa.int64()),  # byte offset or line number where the bad record starts
        pa.field("reason", pa.string(), nullable=False),
        pa.field("excerpt", pa.string()),  # first bytes of the bad record, for a human to look at
    ]
)

# Tokenized shards: one row per document. Parquet key-value metadata b"marin.tokenizer_hash"
# records which tokenizer produced the ids.
TOKENIZED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("tokens", pa.list_(pa.int32()), nullable=False),
    ]
)
TOKENIZER_HASH_KEY = b"marin.tokenizer_hash"
