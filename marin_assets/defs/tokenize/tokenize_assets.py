"""Dagster wiring of the tokenize stage: tokenizer -> tokenized_source (per source) -> mixture (per recipe)."""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.data.sources.partitions import source_partitions
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.lineage.recording import record_output
from marin_assets.resources.spark import SparkResource
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.tokenize import shards
from marin_assets.tokenize import tokenize_recipe as recipes
from marin_assets.tokenize.encoding import EncodeSettings
from marin_assets.tokenize.mixture_build import build_mixture, mixture_data_version
from marin_assets.tokenize.tokenize_job import STATS_FILE, cleaned_document_files, iter_documents, tokenize_source
from marin_assets.tokenize.tokenizer_files import (
    build_tokenizer_output, local_tokenizer_dir, sampled, summarize_tokenizer,
)

UPSTREAM = "cleaned_documents"


def build_tokenize_assets() -> list:
    """tokenizer, tokenized_source (per source), mixture (per mixture recipe), versioned by the recipes now."""
    tokenizer_recipe = recipes.load_tokenizer_recipe()
    all_mixtures = {name: recipes.load_mixture_recipe(name) for name in recipes.mixture_names()}
    return [
        versioned(tokenizer_recipe.tokenizer)(dg.asset(
            group_name="tokenize", kinds={"python"},
            deps=[dg.AssetDep(UPSTREAM, partition_mapping=dg.AllPartitionMapping())],
            description="Byte-level BPE trained on the cleaned corpus (or imported); an HF tokenizer folder.",
        )(tokenizer)),
        versioned(tokenizer_recipe)(dg.asset(
            partitions_def=source_partitions(), group_name="tokenize",
            kinds={"spark", "parquet"}, deps=[UPSTREAM, "tokenizer"],
            description="One source's documents as Parquet shards of token ids (tokens: list<int32>), by a Spark job.",
        )(tokenized_source)),
        versioned(all_mixtures)(dg.asset(
            partitions_def=mixture_partitions(), group_name="tokenize",
            kinds={"python", "parquet"},
            deps=[dg.AssetDep("tokenized_source", partition_mapping=dg.AllPartitionMapping()), "tokenizer"],
            description="A named, weighted, deterministic mix of tokenized sources: train/validation shards + "
                        "mixture.json.",
        )(mixture)),
    ]


def mixture_partitions() -> dg.StaticPartitionsDefinition:
    """One partition per mixture recipe (recipes/mixtures/*.yaml)."""
    return dg.StaticPartitionsDefinition(recipes.mixture_names())


def _document_rows(storage, sources: list[str]):
    for source in sorted(sources):
        for batch in iter_documents(cleaned_document_files(storage, source), 10_000):
            yield from ((source, doc_id, text or "") for doc_id, text in zip(batch["id"], batch["text"], strict=True))


def tokenizer(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    spec = recipes.load_tokenizer_recipe().tokenizer
    st = storage.storage
    with st.atomic_dir(layout.TOKENIZER, spec.name) as staged:
        summary = build_tokenizer_output(spec, sampled(_document_rows(st, spec.sources or load_sources().names),
                                                       spec), staged)
        return record_output(
            context, staged, recipe=spec, output_hash=summary.hash,
            stats={"vocab_size": summary.vocab_size, "pad_id": summary.pad_id, "bos_id": summary.bos_id,
                   "eos_id": summary.eos_id, "tokenizer_hash": summary.hash},
            extra_metadata={"sample_encodings": metadata_table(
                [{"text": text, "tokens": len(ids), "ids": " ".join(map(str, ids))}
                 for text, ids in summary.sample_encodings.items()], columns=["text", "tokens", "ids"])},
        )


def tokenized_source(context: dg.AssetExecutionContext, storage: StorageResource,
                     spark: SparkResource) -> dg.MaterializeResult:
    recipe = recipes.load_tokenizer_recipe()
    source, st, tok = context.partition_key, storage.storage, recipe.tokenization
    files = cleaned_document_files(st, source)
    with local_tokenizer_dir(st, recipe.tokenizer.name) as folder, st.atomic_dir(layout.TOKENIZED, source) as staged:
        settings = EncodeSettings(folder, summarize_tokenizer(folder).hash, tok.add_bos, tok.add_eos,
                                  tok.encode_batch_documents)
        stats = tokenize_source(spark.get_session(), files, source, staged.path, settings, tok.documents_per_shard)
        if stats["documents"] == 0:
            context.log.warning(f"source {source!r} has no documents: wrote no shards")
        staged.write_json(stats, STATS_FILE)
        return record_output(
            context, staged, recipe=recipe, stats=stats,
            extra_metadata={"tokens_per_document_histogram": metadata_table(
                                shards.histogram_rows(stats["tokens_per_document_histogram"]),
                                columns=["tokens_from", "tokens_to", "documents"]),
                            "shards": metadata_table([{"shard": name} for name in stats["shards"]], columns=["shard"])},
        )


def mixture(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    name, st = context.partition_key, storage.storage
    recipe = recipes.load_mixture_recipe(name)
    tokenizer_name = recipes.load_tokenizer_recipe().tokenizer.name
    with local_tokenizer_dir(st, tokenizer_name) as folder:
        summary = summarize_tokenizer(folder)
    with st.atomic_dir(layout.MIXTURES, name) as staged:
        info, plan = build_mixture(st, name, recipe, summary, st.committed_uri(layout.TOKENIZER, tokenizer_name),
                                   load_sources().names, staged)
        for warning in plan.warnings:
            context.log.warning(f"mixture {name}: {warning}")
        return record_output(
            context, staged, recipe=recipe, output_hash=mixture_data_version(staged, info),
            stats={k: info[k] for k in ("train_tokens", "validation_tokens", "train_documents", "validation_documents",
                                        "train_sequences", "tokenizer_hash", "seq_len")},
            extra_metadata={
                "train_glob": info["train_glob"], "validation_glob": str(info["validation_glob"]),
                "sources": _sources_table(info["sources"]),
                "warnings": dg.MetadataValue.json(info["warnings"]),
            },
        )


def _sources_table(sources: dict) -> dg.TableMetadataValue:
    return metadata_table(
        [{"source": name, "target_weight": s["target_weight"], "realised_weight": s["realised_weight"],
          "epochs": s["epochs"], "train_tokens": s["train_tokens"], "validation_tokens": s["validation_tokens"]}
         for name, s in sources.items()]
    )

