"""Where each stage's outputs live under the storage root. Stages import paths from here only."""

RAW = "raw"                   # raw/<source>/            file inventory + checksums of a source snapshot
CLEANED = "cleaned"           # cleaned/<source>/        documents/ rejected/ quarantine/ (Parquet) + stats.json
EVAL = "eval"                 # eval/<eval set>/          items.parquet (normalised text) + ngrams.parquet (hashed n-grams)
EVAL_TEXTS = "texts.parquet"  # eval/<eval set>/texts.parquet  raw text (id, text): the training runs evaluate on it
QUALITY = "quality_classifier"  # quality_classifier/     model.bin (fastText) + metrics.json
REPORTS = "reports"           # reports/<source>/         data_report: report.md, report.json, *.png
TOKENIZER = "tokenizer"       # tokenizer/<name>/        tokenizer.json, tokenizer_config.json
TOKENIZED = "tokenized"       # tokenized/<source>/      shard-00000.parquet ... (tokens: list<int32>)
MIXTURES = "mixtures"         # mixtures/<mixture>/      train/ validation/ shards + mixture.json
TRAINING = "training"         # training/<run>/          MaxText base_output_directory of one run
PLAN_DIR = "plan"             # training/<run>/plan/     training_plan's output (preflight)
FINAL_DIR = "final"           # training/<run>/final/    training_run's output (result, loss curve)
WEIGHTS = "weights"           # weights/<entry>/<checksum>/  an imported HF folder as a MaxText checkpoint (0/items)
SCALING = "scaling"           # scaling/<suite>/         runs/<budget>__<size>/, fits/, plots/
GOVERNANCE = "governance"     # governance/              failure_catalog/, audit/
EVALUATION = "evaluation"     # evaluation/<runs>/<run>/<task set>/  downstream_eval: result.json, accuracy.png
TASK_SET_DECONTAMINATION = "task_set_decontamination"  # <task set>.items.parquet + manifest.json: cleaning decontaminates on them
