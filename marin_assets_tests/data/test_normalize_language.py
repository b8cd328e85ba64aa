"""Normalisation (NFC, whitespace) and offline language identification."""

from __future__ import annotations

from marin_assets.data.clean.language_id import ParagraphDrop, drop_foreign_paragraphs, identify_language, language_rejection
from marin_assets.data.clean.normalize import normalize_text


def test_normalize_unicode_and_whitespace():
    raw = "  Cafe\u0301\u00a0\u00a0au lait \r\n\r\n \r\n    indented\tline  \n\n\n\nend\u2028x\x00y "
    assert normalize_text(raw) == "Caf\u00e9 au lait\n\n    indented line\n\nend\nxy"


def test_normalize_is_idempotent():
    text = normalize_text("A  b\r\n\n\n c\u0301 \t d")
    assert normalize_text(text) == text


def test_language_identification_offline():
    lang, score = identify_language("The quick brown fox jumps over the lazy dog near the river bank.")
    assert lang == "en" and score > 0.9
    assert identify_language("Der schnelle braune Fuchs springt über den faulen Hund.")[0] == "de"


def test_language_rules():
    assert language_rejection("en", 0.99, ["en"], 0.65) is None
    assert language_rejection("de", 0.99, ["en"], 0.65) == "language:not_in_allowlist"
    assert language_rejection("en", 0.30, ["en"], 0.65) == "language:low_score"
    assert language_rejection("de", 0.10, [], 0.65) is None  # empty allowlist: every language kept


ENGLISH = ("The harbour opens at six in the morning, and the first boats leave for the islands soon after. "
           "Visitors should buy tickets at the kiosk near the lighthouse, where the staff also sell maps. ")  # fmt: skip
GERMAN = ("Der Hafen öffnet um sechs Uhr morgens, und die ersten Boote fahren kurz danach zu den Inseln. "
          "Besucher sollten ihre Fahrkarten am Kiosk beim Leuchtturm kaufen, wo es auch Karten gibt. ")  # fmt: skip


def _english_then_german() -> str:
    """Starts with more than 2,000 characters of English, then mostly German (the issue's page)."""
    return "\n".join([ENGLISH * 2] * 6 + [GERMAN * 2] * 20)


def test_english_then_german_page_is_identified_as_german_over_the_whole_document():
    text = _english_then_german()
    assert text.index(GERMAN) > 2000 and identify_language(text[:2000])[0] == "en"  # a prefix says English
    lang, score = identify_language(text)
    assert lang == "de" and 0.65 < score < 0.9  # windows across the text: mostly German


def test_english_then_german_page_is_not_kept_as_english():
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.cleaning_rows import REJECTED, RecordCleaner

    rec = {"kind": "record", "id": "mixed", "url": None, "content": _english_then_german(), "content_type": "text",
           "metadata": "{}", "raw_length": 1, "file": "f.jsonl", "offset": 0, "reason": None, "excerpt": None}  # fmt: skip
    row = RecordCleaner(load_cleaning_recipe()).clean(rec)
    assert row["status"] == REJECTED and row["reason"] == "language:not_in_allowlist"
    assert '"language": "de"' in row["metadata"] and row["value"].startswith("de ")


def test_foreign_paragraphs_are_dropped_and_counted_when_the_recipe_asks():
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.cleaning_rows import RecordCleaner

    text = "\n".join([ENGLISH * 2] * 8 + [GERMAN * 2] + [ENGLISH * 2] * 8)
    assert drop_foreign_paragraphs(text, ["en"], 100, 0.65) == ParagraphDrop(
        "\n".join([ENGLISH * 2] * 16).strip(), 1, len(GERMAN * 2), 17
    )
    recipe = load_cleaning_recipe()
    recipe = recipe.model_copy(update={"language": recipe.language.model_copy(update={"drop_paragraphs": True})})
    rec = {"kind": "record", "id": "one-german-paragraph", "url": None, "content": text, "content_type": "text",
           "metadata": "{}", "raw_length": 1, "file": "f.jsonl", "offset": 0, "reason": None, "excerpt": None}  # fmt: skip
    row = RecordCleaner(recipe).clean(rec)
    assert "Hafen" not in row["text"]
    assert '"language_dropped_paragraphs": 1' in row["metadata"] and '"language": "en"' in row["metadata"]


def test_the_share_of_foreign_paragraphs_is_recorded_and_a_recipe_threshold_rejects_on_it():
    """An English-labelled document whose identifiable paragraphs are 2 of 8 German: its share (0.25) is in its
    metadata; max_foreign_paragraph_share 0.2 rejects it (language:foreign_paragraphs), 0.3 keeps it whole."""
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.clean.cleaning_rows import REJECTED, RecordCleaner

    text = "\n".join([ENGLISH * 2] * 3 + [GERMAN * 2] + [ENGLISH * 2] * 3 + [GERMAN * 2])
    assert drop_foreign_paragraphs(text, ["en"], 100, 0.65).foreign_share == 2 / 8
    rec = {"kind": "record", "id": "mixed", "url": None, "content": text, "content_type": "text",
           "metadata": "{}", "raw_length": 1, "file": "f.jsonl", "offset": 0, "reason": None, "excerpt": None}  # fmt: skip

    def clean(limit):
        recipe = load_cleaning_recipe()
        language = recipe.language.model_copy(update={"max_foreign_paragraph_share": limit})
        return RecordCleaner(recipe.model_copy(update={"language": language})).clean(rec)

    strict = clean(0.2)
    assert strict["status"] == REJECTED and strict["reason"] == "language:foreign_paragraphs"
    assert strict["value"] == "0.25 > 0.2" and '"language": "en"' in strict["metadata"]
    lenient = clean(0.3)
    # past the language step (the repeated sample text then meets the repetition filters)
    assert not (lenient["reason"] or "").startswith("language")
    assert '"language_foreign_paragraph_share": 0.25' in lenient["metadata"]
    assert "Hafen" in lenient["text"]  # measured, not dropped (drop_paragraphs is off)
    assert "language_foreign_paragraph_share" not in clean(None)["metadata"]  # off: no paragraph identification
