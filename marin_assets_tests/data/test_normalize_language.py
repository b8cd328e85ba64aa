"""Normalisation (NFC, whitespace) and offline language identification."""

from __future__ import annotations

from marin_assets.data.language import identify_language, language_rejection
from marin_assets.data.normalize import normalize_text


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
