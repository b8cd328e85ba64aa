"""Text normalisation applied to every document before language id, filters and dedup."""

from __future__ import annotations

import re
import unicodedata

# Line breaks of every kind become "\n"; other whitespace becomes spaces; runs of spaces after text
# collapse to one (leading indentation stays); trailing spaces and runs of blank lines are cut.
_LINE_BREAKS_RE = re.compile(r"\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_OTHER_SPACE_RE = re.compile(r"[^\S\n ]")
# Runs of 2+ spaces right after text, as r"(?<=\S) {2,}" finds them; starting with the literal two
# spaces lets the regex engine skip ahead to each double space instead of testing every character.
_INNER_SPACES_RE = re.compile(r"  (?<=\S  ) *")
_BLANK_LINES_RE = re.compile(r"\n\n\n+")
# Control characters other than tab/newline carry no text.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u200b\ufeff]")
# Every character _CONTROL_RE, _LINE_BREAKS_RE and _OTHER_SPACE_RE replace, in one class (a test checks it
# over all of Unicode): one pass finds which of them a text holds, and a str.replace per character does the rest.
_REPLACED_RE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\xa0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]")


def normalize_text(text: str, form: str = "NFC") -> str:
    """Unicode `form`, one kind of line break, single spaces between words, at most one blank line."""
    text = unicodedata.normalize(form, text)
    # Each step is skipped when a cheap test shows it has nothing to change (most texts): every
    # character the first three replace is unprintable (test_normalize_language checks all of Unicode).
    if not text.replace("\n", "").isprintable():
        # Tabs are most often the only such characters (man pages, changelogs): then the three
        # character-class regexes (tried at every position) come to replacing the tabs.
        untabbed = text.replace("\t", " ")
        if untabbed.replace("\n", "").isprintable():
            text = untabbed
        else:
            text = _replace_unprintable(text)
    if "  " in text:
        text = _INNER_SPACES_RE.sub(" ", text)
    # As re.sub(r" *\n(?: *\n)*", one or two newlines): a pattern that may start with spaces is tried at
    # every space of the text, which made this a third of normalisation; per line it is str.rstrip.
    if " \n" in text:
        text = "\n".join([line.rstrip(" ") for line in text.split("\n")])
    if "\n\n\n" in text:
        text = _BLANK_LINES_RE.sub("\n\n", text)
    return text.strip()


def _replace_unprintable(text: str) -> str:
    """_CONTROL_RE, _LINE_BREAKS_RE then _OTHER_SPACE_RE substituted in turn, with a regex pass for the
    three (each pass tests every character: most of normalisation for texts with a no-break space)."""
    found = set(_REPLACED_RE.findall(text))
    removed = [c for c in found if _CONTROL_RE.match(c)]
    breaks = [c for c in found if _LINE_BREAKS_RE.match(c)]
    for char in removed:  # first: removing one can join "\r" and "\n" into one line break
        text = text.replace(char, "")
    if "\r" in found:
        text = text.replace("\r\n", "\n")
    for char in breaks:
        text = text.replace(char, "\n")
    for char in found.difference(removed, breaks):
        text = text.replace(char, " ")
    return text


def dedup_key(text: str) -> str:
    """The text exact dedup compares: case-folded, whitespace runs collapsed.

    As re.sub(r"\\s+", " ", ...).strip(), which splits on the same characters (str.isspace), at twice the speed.
    """
    return " ".join(text.casefold().split())
