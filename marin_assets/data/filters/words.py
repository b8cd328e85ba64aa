"""Words as datatrove splits them for the Gopher filters: spaCy's blank English tokenizer, without spaCy.

datatrove's split_into_words (the published FineWeb filters) runs spaCy's `spacy.blank("en")`
tokenizer and drops whitespace tokens. This module runs the same algorithm (spaCy's
Tokenizer.explain, which spaCy documents as giving the tokenizer's tokens) over spaCy's own English
rules, shipped as data in spacy_en_rules.json (scripts/make_spacy_en_rules.py writes it from the
installed spaCy): per whitespace-separated chunk, special cases ("cannot" -> "can" "not", ":)",
"e.g."), then prefixes and suffixes stripped one at a time, then URL-like chunks kept whole, then
infixes split. The special-case matcher spaCy runs afterwards is applied within a chunk.

A chunk's tokens depend on the chunk alone and chunks recur across documents: word_table.py splits
each distinct chunk once per process and turns documents into word ids.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from marin_assets.data.filters.ascii_regex import ascii_only
from marin_assets.data.filters.infix_search import all_matches
from marin_assets.data.filters.punctuation import PUNCTUATION
from marin_assets.data.filters.suffix_search import end_anchored_search

RULES_FILE = Path(__file__).with_name("spacy_en_rules.json")
NON_SYMBOL, HAS_LETTER = 1, 2  # word class bits (word_class)


def _searches(prefix: str, suffix: str, infix: str, url: str) -> tuple:
    """(prefix search, suffix search, infix matches, url match) for the patterns."""
    return (re.compile(prefix).search,
            end_anchored_search(suffix),  # the same matches, looking at the chunk's end
            all_matches(infix),  # list(finditer), tried only where a match can start
            re.compile(url).match)  # fmt: skip


class SpacyEnglishRules:
    def __init__(self, data: dict):
        self.version = data["spacy_version"]
        self.suffix_pattern, self.infix_pattern = data["suffix"], data["infix"]
        patterns = [data[key] for key in ("prefix", "suffix", "infix", "url")]
        self.prefix, self.suffix, self.infix, self.url = self.searches = _searches(*patterns)
        # the same searches for ASCII chunks (most chunks split for the first time), without what only
        # matches other characters (ascii_regex.py)
        restricted = [ascii_only(p) for p in patterns]
        self.ascii_searches = self.searches if None in restricted else _searches(*restricted)
        self.token_match = re.compile(data["token_match"]).match if data["token_match"] else (lambda s: None)
        self.special: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in data["special_cases"].items()}
        # special cases made of affix characters are also found across the tokens of a chunk (spaCy's matcher)
        self.matched: dict[tuple[str, ...], tuple[str, ...]] = {}
        for key, tokens in self.special.items():
            if self.prefix(key) or self.suffix(key) or self.infix(key):
                pattern = tuple(self._affixes(key, specials=False))
                if len(pattern) > 1:
                    self.matched.setdefault(pattern, tokens)
        self.longest = max((len(p) for p in self.matched), default=0)
        self.match_starts = {p[0] for p in self.matched}  # a match needs one of these tokens first

    def _affixes(self, chunk: str, specials: bool = True) -> list[str]:
        """spaCy's Tokenizer.explain for one chunk (no whitespace in it)."""
        special = self.special if specials else {}
        prefix_search, suffix_search, infix_matches, url_match = (
            self.ascii_searches if chunk.isascii() else self.searches)  # a chunk's parts are ASCII when it is
        tokens: list[str] = []
        suffixes: list[str] = []
        s = chunk
        while s:
            if s in special:
                tokens.extend(special[s])
                break
            # each regex runs once per state of s (spaCy's loop tests the prefix, then the suffix, again)
            pre = prefix_search(s)
            suf = None if pre else suffix_search(s)
            while pre or suf:
                if self.token_match(s):
                    tokens.append(s)
                    s = ""
                    break
                if s in special:
                    tokens.extend(special[s])
                    s = ""
                    break
                if pre:
                    if pre.end() == 0:
                        break
                    tokens.append(s[: pre.end()])
                    s = s[pre.end() :]
                    suf = None if s in special else suffix_search(s)
                if suf:
                    if suf.start() == len(s):
                        break
                    suffixes.append(s[suf.start() :])
                    s = s[: suf.start()]
                pre = prefix_search(s)
                suf = None if pre else suffix_search(s)
            if not s:
                continue
            if self.token_match(s) or url_match(s):
                tokens.append(s)
            elif s in special:
                tokens.extend(special[s])
            elif infixes := infix_matches(s):
                offset = 0
                for m in infixes:
                    if offset == 0 and m.start() == 0:
                        continue
                    tokens.extend(part for part in (s[offset : m.start()], s[m.start() : m.end()]) if part)
                    offset = m.end()
                if s[offset:]:
                    tokens.append(s[offset:])
            else:
                tokens.append(s)
            s = ""
        tokens.extend(reversed(suffixes))
        return tokens

    def split_chunk(self, chunk: str) -> tuple[str, ...]:
        tokens = self._affixes(chunk)
        if len(tokens) < 2 or not self.longest:
            return tuple(tokens)
        out, i = [], 0
        while i < len(tokens):  # longest special case starting here, as spaCy's filter_spans keeps it
            for n in range(min(self.longest, len(tokens) - i) if tokens[i] in self.match_starts else 0, 1, -1):
                if (hit := self.matched.get(tuple(tokens[i : i + n]))) is not None:
                    out.extend(hit)
                    i += n
                    break
            else:
                out.append(tokens[i])
                i += 1
        return tuple(out)


@cache
def rules() -> SpacyEnglishRules:
    return SpacyEnglishRules(json.loads(RULES_FILE.read_text(encoding="utf-8")))


def word_class(word: str) -> int:
    """NON_SYMBOL: a character outside the punctuation set; HAS_LETTER: a str.isalpha character (as datatrove:
    not \\w, "²" is no letter). A word of letters only is both (no letter is punctuation)."""
    return (0 if PUNCTUATION.issuperset(word) else NON_SYMBOL) | (HAS_LETTER if any(map(str.isalpha, word)) else 0)
