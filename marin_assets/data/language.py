"""Offline language identification (py3langid: the langid.py model ships inside the wheel)."""

from __future__ import annotations

from functools import cache


@cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify_language(text: str, max_chars: int = 2000) -> tuple[str, float]:
    """(ISO 639-1 code, probability) of the text's leading `max_chars` characters."""
    lang, score = _identifier().classify(text[:max_chars])
    return lang, round(float(score), 4)


def language_rejection(lang: str, score: float, allowlist: list[str], min_score: float) -> str | None:
    """The language rule a document fails, or None. An empty allowlist keeps every language."""
    if not allowlist:
        return None
    if lang not in allowlist:
        return "language:not_in_allowlist"
    if score < min_score:
        return "language:low_score"
    return None
