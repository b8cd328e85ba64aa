"""Offline language identification over the whole document (py3langid: the model ships in the wheel).

A prefix is not enough: a page can start with an English menu and continue in German. So the text
is sampled at evenly spaced windows from start to end, each window is identified, and a language's
document score is the length-weighted mean of its windows' probabilities (0 where a window went
to another language). Optionally paragraphs in a language outside the allowlist are dropped.
The windows of many documents are classified in one batch (fastpath/langid: py3langid's model, same results);
`language.identifier: py3langid` asks py3langid's own LanguageIdentifier.classify, window by window, instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cache


@cache
def _identifier():
    """py3langid's identifier as py3langid loads it (the reference; the pipeline maps the same arrays)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def sample_windows(text: str, samples: int, sample_chars: int) -> list[str]:
    """`samples` (>= 2) windows of `sample_chars` from the first to the last character; short texts whole."""
    if len(text) <= samples * sample_chars:
        return [text]
    step = (len(text) - sample_chars) / (samples - 1)
    return [text[round(i * step) : round(i * step) + sample_chars] for i in range(samples)]


@cache
def _batch_identifier():
    from marin_assets.fastpath.langid.language_batch import BatchIdentifier
    from marin_assets.fastpath.langid.language_model import float32_table, mapped_identifier

    return BatchIdentifier(mapped_identifier(), float32_table())


IDENTIFIERS = ("fast", "py3langid")  # the recipe's language.identifier


def classify_windows(windows: list[str], identifier: str = "fast") -> list[tuple[str, float]]:
    """(language, probability) per window: the batch fast path, or py3langid's own classify window by window."""
    if identifier == "fast":
        return _batch_identifier().classify_many(windows)
    if identifier == "py3langid":
        return [_identifier().classify(window) for window in windows]
    raise ValueError(f"unknown language identifier {identifier!r}; known: {', '.join(IDENTIFIERS)}")


def identify_language(text: str, samples: int = 5, sample_chars: int = 500,
                      identifier: str = "fast") -> tuple[str, float]:  # fmt: skip
    """(ISO 639-1 code, document score in [0, 1]) from windows across the whole text."""
    return identify_languages([text], samples, sample_chars, identifier)[0]


def identify_languages(texts: list[str], samples: int = 5, sample_chars: int = 500,
                       identifier: str = "fast") -> list[tuple[str, float]]:  # fmt: skip
    """identify_language for each text, with every window of every text classified in one batch."""
    windows = [sample_windows(text, samples, sample_chars) for text in texts]
    verdicts = iter(classify_windows([w for per_text in windows for w in per_text], identifier))
    return [document_language(per_text, verdicts) for per_text in windows]


def document_language(windows: list[str], verdicts) -> tuple[str, float]:
    """Length-weighted mean of the windows' probabilities per language; ties go to the first code."""
    weights: dict[str, float] = defaultdict(float)
    total = 0
    for window in windows:
        lang, prob = next(verdicts)
        weights[lang] += len(window) * float(prob)
        total += len(window)
    if not total:
        return "unknown", 0.0
    lang = max(sorted(weights), key=weights.get)
    return lang, round(weights[lang] / total, 4)


@dataclass(frozen=True)
class ParagraphDrop:
    text: str
    dropped: int  # paragraphs removed
    dropped_chars: int
    identified: int = 0  # paragraphs long enough to identify (the share's denominator)

    @property
    def foreign_share(self) -> float:
        """Share of the identifiable paragraphs identified outside the allowlist (0 when none is identifiable)."""
        return self.dropped / self.identified if self.identified else 0.0


def drop_foreign_paragraphs(text: str, allowlist: list[str], min_chars: int, min_score: float,
                            identifier: str = "fast") -> ParagraphDrop:  # fmt: skip
    """Remove lines (paragraphs) of at least min_chars identified, with min_score, outside the allowlist.

    Short lines (headings, list items) are too short to identify reliably and are kept.
    """
    lines = text.split("\n")
    long_lines = [line for line in lines if len(line.strip()) >= min_chars]
    verdicts = iter(classify_windows(long_lines, identifier))
    kept, dropped, dropped_chars = [], 0, 0
    for line in lines:
        if len(line.strip()) >= min_chars:
            lang, prob = next(verdicts)
            if lang not in allowlist and prob >= min_score:
                dropped += 1
                dropped_chars += len(line)
                continue
        kept.append(line)
    return ParagraphDrop("\n".join(kept).strip() if dropped else text, dropped, dropped_chars, len(long_lines))


def language_rejection(lang: str, score: float, allowlist: list[str], min_score: float) -> str | None:
    """The language rule a document fails, or None. An empty allowlist keeps every language."""
    if not allowlist:
        return None
    if lang not in allowlist:
        return "language:not_in_allowlist"
    if score < min_score:
        return "language:low_score"
    return None
