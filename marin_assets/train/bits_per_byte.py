"""Bits per byte of a run's validation loss: comparable across tokenizers (Paloma-style).

    bpb = loss (nats per token) x tokens / (ln 2 x bytes)

`bytes` is the UTF-8 byte count of the validation text, recovered by decoding the validation shards'
tokens with the mixture's tokenizer (special tokens skipped), and `tokens` the count of the same
tokens, so bytes / tokens is the tokenizer's compression on that text. MaxText's final eval covers
the whole validation split when eval_steps = -1 (the scaling suites); with a partial eval the
split's ratio is applied to the evaluated tokens. Counted per source when the shards carry a
`source` column (the mixture stage's do), for per-domain reports; the loss itself is the mixture's.
Eval sets count the bytes of their raw text directly (train.eval_set_texts), not decoded tokens.
"""

from __future__ import annotations

import math

ALL = "all"


def load_tokenizer(tokenizer_uri: str):
    import fsspec
    from tokenizers import Tokenizer

    with fsspec.open(f"{tokenizer_uri.rstrip('/')}/tokenizer.json", "r") as f:
        return Tokenizer.from_str(f.read())


def validation_text_bytes(validation_glob: str, tokenizer_uri: str) -> dict[str, dict[str, int]]:
    """{source: {documents, tokens, bytes}} of the validation split, plus the total under "all"."""
    import fsspec
    import pyarrow.parquet as pq

    tokenizer = load_tokenizer(tokenizer_uri)
    fs, _ = fsspec.core.url_to_fs(validation_glob)
    counts: dict[str, dict[str, int]] = {}
    for path in sorted(fs.glob(validation_glob)):
        with fs.open(path, "rb") as f:
            table = pq.read_table(f)
        tokens = table.column("tokens").to_pylist()
        sources = table.column("source").to_pylist() if "source" in table.column_names else [ALL] * len(tokens)
        texts = tokenizer.decode_batch(tokens, skip_special_tokens=True)
        for source, ids, text in zip(sources, tokens, texts):
            for key in {source, ALL}:
                entry = counts.setdefault(key, {"documents": 0, "tokens": 0, "bytes": 0})
                entry["documents"] += 1
                entry["tokens"] += len(ids)
                entry["bytes"] += len(text.encode("utf-8"))
    return counts


def bits_per_byte(loss: float | None, tokens: int, n_bytes: int) -> float | None:
    """Nats per token -> bits per byte of the same text; None when either side is unknown."""
    if loss is None or not math.isfinite(loss) or tokens <= 0 or n_bytes <= 0:
        return None
    return float(loss * tokens / (math.log(2) * n_bytes))


def evaluation_metrics(loss: float | None, validation_glob: str | None, tokenizer_uri: str,
                       domains: dict | None = None, eval_sets: dict | None = None) -> dict:
    """result.json's `metrics` (fit.metric can name any key: loss, bpb, loss/<domain>, bpb/<domain>),
    the per-domain rows behind them (train.domain_report), and the byte counts. `domains`: {name:
    {loss, tokens}} of the final checkpoint (domain_eval), sources and eval sets alike; `eval_sets`:
    {name: {documents, tokens, bytes}} of each eval set's raw text (eval_set_texts). A domain's bpb
    uses its own text's bytes per token."""
    eval_sets = eval_sets or {}
    if not validation_glob:
        return {"metrics": {"loss": loss}, "validation_text": {}, "domains": []}
    counts = validation_text_bytes(validation_glob, tokenizer_uri)
    total = counts.get(ALL, {"tokens": 0, "bytes": 0, "documents": 0})
    metrics = {"loss": loss, "bpb": bits_per_byte(loss, total["tokens"], total["bytes"])}
    rows = [{"domain": ALL, "kind": "mixture", "loss": loss, "bpb": metrics["bpb"], **total}]
    for name, result in sorted((domains or {}).items(), key=lambda kv: (kv[0] in eval_sets, kv[0])):
        kind = "eval_set" if name in eval_sets else "source"
        text = (eval_sets if kind == "eval_set" else counts).get(name, {"tokens": 0, "bytes": 0, "documents": 0})
        text = {k: text.get(k, 0) for k in ("documents", "tokens", "bytes")}
        bpb = bits_per_byte(result["loss"], text["tokens"], text["bytes"])
        metrics[f"loss/{name}"], metrics[f"bpb/{name}"] = result["loss"], bpb
        rows.append({"domain": name, "kind": kind, "loss": result["loss"], "bpb": bpb, **text,
                     "eval_tokens": result["tokens"]})
    return {"metrics": metrics, "validation_text": counts, "domains": rows}


def run_evaluation(result, mixture) -> dict:
    """What training_run and scaling_run both record of a finished run (TrainingResult) on its mixture:
    evaluation_metrics over its sources and eval sets, and the eval sets it could not evaluate."""
    evaluation = evaluation_metrics(result.final_eval_loss, mixture.validation_glob, mixture.tokenizer_uri,
                                    result.domain_eval, result.eval_sets)
    return {**evaluation, "eval_sets_missing": dict(result.eval_sets_missing)}
