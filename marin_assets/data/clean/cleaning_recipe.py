"""The cleaning recipe (recipes/cleaning.yaml) as a validated model."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from marin_assets.core.recipes import Recipe, load_recipe
from marin_assets.data.curate.curation_recipe import DecontaminationSettings, DedupPrecisionSettings, PiiSettings, QualitySettings
from marin_assets.data.dedup.dedup_keys import DEFAULT_HASH_FAMILY
from marin_assets.data.extract.extractor_choice import ExtractionSettings
from marin_assets.data.clean.filters.pipeline import FilterSettings
from marin_assets.data.clean.filters.spacy_tokenizer import spacy_installed
from marin_assets.data.dedup.hash_families import hash_family

CLEANING_RECIPE = "cleaning.yaml"


class SparkSettings(Recipe):
    partitions: int = Field(default=8, ge=1, description="least parallelism of the Python processing stage")
    # A processing partition is sorted by id (the duplicate-id window) and cleaned by one task: a fixed
    # count would grow its size with the corpus (at 1M documents, 450 MB partitions ran the JVM out of heap).
    partition_bytes: int = Field(default=64 * 2**20, ge=1, description="most record bytes per processing partition")
    rows_per_file: int = Field(default=100_000, ge=1, description="target rows per output Parquet file")
    # One file is written by one task: a cap on bytes keeps a table of long texts (the rejected table holds
    # most of a corpus) from funnelling through a single writer.
    bytes_per_file: int = Field(default=128 * 2**20, ge=1, description="target text bytes per output Parquet file")
    native_parquet: bool = Field(default=True, description="read Parquet sources with Spark's own reader, "
                                 "file by file where it gives the Python reader's records (data/native_parquet.py)")

    def partitions_for(self, record_bytes: int) -> int:
        """Processing partitions for a source of about record_bytes: at least `partitions`, none above partition_bytes."""
        return max(self.partitions, math.ceil(record_bytes / self.partition_bytes))

    def files_for(self, n_rows: int, n_bytes: int) -> int:
        """Output files for a table of n_rows rows holding n_bytes of text: whichever limit needs more."""
        return max(1, math.ceil(n_rows / self.rows_per_file), math.ceil(n_bytes / self.bytes_per_file))


class NormalizeSettings(Recipe):
    form: str = Field(default="NFC", pattern="^(NFC|NFKC)$")


class LanguageSettings(Recipe):
    allowlist: list[str] = Field(default_factory=lambda: ["en"], description="empty: keep every language")
    min_score: float = Field(default=0.65, ge=0.0, le=1.0)
    samples: int = Field(default=5, ge=2, description="windows identified, spread from start to end of the text")
    sample_chars: int = Field(default=500, ge=20, description="characters per window")
    drop_paragraphs: bool = Field(default=False, description="drop paragraphs identified outside the allowlist")
    paragraph_min_chars: int = Field(default=100, ge=1, description="shorter paragraphs are never dropped")
    identifier: Literal["fast", "py3langid"] = Field(
        default="fast", description="fast: py3langid's classifier over many windows at once (fastpath/langid), "
        "the same probabilities; py3langid: its own LanguageIdentifier.classify, window by window")
    max_foreign_paragraph_share: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="reject a document (language:foreign_paragraphs) when more than this share of its identifiable "
                    "paragraphs is outside the allowlist; set (or drop_paragraphs): each document's share is recorded")


class DedupSettings(Recipe):
    scope: Literal["source", "global"] = Field(
        default="source", description="source: duplicates within each source; global: across all cleared sources"
    )
    exact: bool = True
    near: bool = True
    shingle_size: int = Field(default=5, ge=1, description="word n-gram size")
    num_perm: int = Field(default=112, ge=1)
    bands: int = Field(default=14, ge=1)
    rows: int = Field(default=8, ge=1)
    seed: int = 1
    hash_family: str = Field(
        default=DEFAULT_HASH_FAMILY,
        description="MinHash hash family (data/dedup/hash_families): polynomial (the default: numpy hashes, fast) or "
        "datasketch (bit-identical to datasketch MinHash, SHA-1 per shingle in fastpath/hashing)",
    )

    @field_validator("hash_family")
    @classmethod
    def _registered_family(cls, name: str) -> str:
        hash_family(name)  # the registry's own check and message
        return name

    @model_validator(mode="after")
    def _bands_cover_permutations(self) -> DedupSettings:
        if self.bands * self.rows != self.num_perm:
            raise ValueError(f"bands x rows must equal num_perm ({self.bands}x{self.rows} != {self.num_perm})")
        return self


class CleaningRecipe(Recipe):
    max_record_bytes: int = Field(default=5_000_000, ge=1)
    spark: SparkSettings = SparkSettings()
    extraction: ExtractionSettings = ExtractionSettings()
    normalize: NormalizeSettings = NormalizeSettings()
    language: LanguageSettings = LanguageSettings()
    filters: FilterSettings = FilterSettings()
    words: Literal["fast", "spacy"] = Field(
        default="fast", description="the words the filters count: fast: spaCy's English tokenizer re-implemented "
        "(fastpath/words); spacy: spaCy's own spacy.blank('en') tokenizer, text by text (needs spaCy: the bench group)")
    dedup: DedupSettings = DedupSettings()
    # curation steps after the filters (data/curation.py) and the dedup precision check
    decontamination: DecontaminationSettings = DecontaminationSettings()
    pii: PiiSettings = PiiSettings()
    quality: QualitySettings = QualitySettings()
    dedup_precision: DedupPrecisionSettings = DedupPrecisionSettings()

    @field_validator("words")
    @classmethod
    def _splitter_installed(cls, words: str) -> str:
        if words == "spacy" and not spacy_installed():
            raise ValueError("words: spacy needs spaCy installed (`uv sync --group bench`); `fast` needs nothing")
        return words


def load_cleaning_recipe(path: str = CLEANING_RECIPE) -> CleaningRecipe:
    return load_recipe(path, CleaningRecipe)
