"""The maintained library behind `words: spacy`: datatrove's split_into_words, spaCy's blank English tokenizer.

The default (`fast`, marin_assets/fastpath/words/) re-implements this tokenizer over spaCy's rules as
data, splitting each distinct whitespace chunk once per process; this module asks spaCy itself, text by
text, as datatrove does: every token's text stripped, whitespace tokens left out. spaCy is in the bench
dependency group (installed with the test environment), so choosing it without spaCy fails at once.
"""

from __future__ import annotations

from functools import cache


@cache
def tokenizer():
    """spaCy's `spacy.blank("en").tokenizer` (no model, nothing downloaded)."""
    try:
        import spacy
    except ImportError as exc:
        raise RuntimeError("cleaning.yaml words: spacy needs spaCy installed "
                           "(`uv sync --group bench`); `fast` needs nothing") from exc  # fmt: skip
    return spacy.blank("en").tokenizer


def spacy_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("spacy") is not None


def spacy_words(text: str) -> list[str]:
    """The words datatrove's Gopher filters count: spaCy's tokens, stripped, whitespace tokens left out."""
    return [word for token in tokenizer()(text) if (word := token.text.strip())]
