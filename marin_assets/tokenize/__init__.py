"""Tokenize stage: tokenizer (trained byte-level BPE or imported) -> tokenized_source (Parquet token
shards per source) -> mixture (weighted, deterministic train/validation shards + mixture.json).

Pure modules: recipes, tokenizer_files, encoding, shards, tokenize_job, mixture_plan, mixture_build,
mixture_info (the contract training imports). Dagster wiring: assets, checks, definitions.
"""
