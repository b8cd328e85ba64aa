"""Recipe sections of the curation steps that run after the quality filters (cleaning.yaml).

decontamination, pii, quality (scoring with the trained classifier) and dedup_precision (the asset
check on the LSH candidate pairs). The classifier's own training recipe is quality_classifier.yaml.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from marin_assets.core.recipes import Recipe


class DecontaminationSettings(Recipe):
    enabled: bool = True
    ngram: int = Field(default=13, ge=1, description="n-gram size in normalised words (GPT-3 / Marin: 13)")
    policy: Literal["drop", "remove_spans"] = "remove_spans"
    min_remaining_fraction: float = Field(
        default=0.5, ge=0.0, le=1.0, description="remove_spans: drop the document when fewer words remain"
    )
    # Task sets' items (BLiMP: 2-12 words) are matched whole at n = min(ngram, item words); a 3-word
    # BLiMP sentence ("The people shrug.") matched a news article of the extraction benchmark.
    min_item_words: int = Field(
        default=4, ge=1, description="task-set items shorter than this many words are not indexed (listed as too short)"
    )


class PiiSettings(Recipe):
    enabled: bool = True
    replacements: dict[Literal["email", "ip", "phone"], str] = Field(
        default_factory=lambda: {"email": "<EMAIL>", "ip": "<IP_ADDRESS>", "phone": "<PHONE>"},
        description="kind -> replacement token; leave a kind out to keep it",
    )
    public_ips_only: bool = True
    phone_region: str = Field(default="US", description="region for numbers written without a country code")
    sources: dict[str, bool] = Field(default_factory=dict, description="per-source switch overriding `enabled`")

    def enabled_for(self, source: str) -> bool:
        return self.sources.get(source, self.enabled)


class QualitySettings(Recipe):
    score: bool = Field(default=True, description="score every kept document with quality_classifier")
    filter: bool = Field(default=False, description="reject documents scoring below threshold")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)


class DedupPrecisionSettings(Recipe):
    sample_pairs: int = Field(default=500, ge=1, description="LSH candidate pairs sampled per run")
    jaccard_threshold: float = Field(default=0.7, ge=0.0, le=1.0, description="a true duplicate pair is at least this similar")
    min_precision: float = Field(default=0.8, ge=0.0, le=1.0, description="the check fails below this share")
    worst_pairs: int = Field(default=5, ge=0, description="least similar pairs shown in the check's metadata")
    # On by default: raw MinHash LSH over-merges (candidate precision 0.41 at exact Jaccard >= 0.8 on the
    # peer-like Debian corpus, issue 54), as Marin found; false keeps the unverified LSH decisions.
    verify_pairs: bool = Field(default=True, description="merge only candidate pairs whose exact Jaccard reaches "
                               "jaccard_threshold (cost in stats.json: near_dedup_verification); false: raw LSH")
