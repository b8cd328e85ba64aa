"""The data and tokenize stages' assets and checks by name, built once for the tests that materialize them.

The package builds a stage's definitions only when the stage loads (no recipe is read at import); the
tests build them here once, from the recipes as they are at collection, and import them by name.
"""

from marin_assets.defs.data.definitions import data_assets_and_checks
from marin_assets.defs.tokenize.tokenize_assets import build_tokenize_assets
from marin_assets.defs.tokenize.tokenize_checks import build_tokenize_checks

_ASSETS, _CHECKS = data_assets_and_checks()
_ASSETS += build_tokenize_assets()
_CHECKS += build_tokenize_checks()


def _asset(name: str):
    # source_files is a SourceAsset (one key), the others AssetsDefinitions
    return next(a for a in _ASSETS if name in {k.to_user_string() for k in getattr(a, "keys", None) or [a.key]})


def _check(name: str):
    return next(c for c in _CHECKS if any(key.name == name for key in c.check_keys))


source_files, raw_corpus, eval_set, quality_classifier, cleaned_documents, data_report = (
    _asset(n) for n in ("source_files", "raw_corpus", "eval_set", "quality_classifier", "cleaned_documents",
                        "data_report"))  # fmt: skip
tokenizer, tokenized_source, mixture = (_asset(n) for n in ("tokenizer", "tokenized_source", "mixture"))
compliance, counts_conserve, dedup_precision, tokenizer_compatible = (
    _check(n) for n in ("compliance", "counts_conserve", "dedup_precision", "tokenizer_compatible"))
