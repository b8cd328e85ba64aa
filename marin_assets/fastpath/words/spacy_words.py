"""Words as datatrove splits them for the Gopher filters: spaCy's blank English tokenizer, without spaCy.

datatrove's split_into_words (the published FineWeb filters) runs spaCy's `spacy.blank("en")`
tokenizer and drops whitespace tokens. This module runs the same algorithm (spaCy's
Tokenizer.explain, which spaCy documents as giving the tokenizer's tokens) over spaCy's own English
rules, shipped as data in spacy_en_rules.json (scripts/make_spacy_en_rules.py writes it from the
installed spaCy): per whitespace-separated chunk, special cases ("cannot" -> "can" "not", ":)",
"e.g."), then prefixes and suffixes stripped one at a time, then URL-like chunks kept whole, then
infixes split. The special-case matcher spaCy runs afterwards is applied within a chunk.

A chunk's tokens depend on the chunk alone and chunks recur across documents: data/clean/filters/word_table.py
splits each distinct chunk once per process and turns documents into word ids. The library this stands
for is cleaning.yaml `words: spacy` (data/clean/filters/spacy_tokenizer.py); fastpath/test_switches.py
keeps the two equal on real text.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from marin_assets.fastpath.words.ascii_regex import ascii_only
from marin_assets.fastpath.words.infix_search import all_matches
from marin_assets.data.clean.filters.punctuation import PUNCTUATION
from marin_assets.fastpath.words.suffix_search import end_anchored_search

RULES_FILE = Path(__file__).with_name("spacy_en_rules.json")
NON_SYMBOL, HAS_LETTER = 1, 2  # word class bits (word_class)
STATE_MEMO_MAX = 200_000  # inner states remembered per process (what is left of chunks after an affix)


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
        # None when the rules have none (English): a no-op call per state would cost ~5% of the splitting
        self.token_match = re.compile(data["token_match"]).match if data["token_match"] else None
        self.special: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in data["special_cases"].items()}
        self.state_tokens: dict[str, tuple[str, ...]] = {}  # inner states of the affix loop -> tokens (_inner)
        # special cases made of affix characters are also found across the tokens of a chunk (spaCy's matcher)
        self.matched: dict[tuple[str, ...], tuple[str, ...]] = {}
        for key, tokens in self.special.items():
            if self.prefix(key) or self.suffix(key) or self.infix(key):
                pattern = self._affixes(key, specials=False)
                if len(pattern) > 1:
                    self.matched.setdefault(pattern, tokens)
        self.longest = max((len(p) for p in self.matched), default=0)
        self.match_starts = {p[0] for p in self.matched}  # a match needs one of these tokens first

    def _affixes(self, chunk: str, specials: bool = True) -> tuple[str, ...]:
        """spaCy's Tokenizer.explain for one chunk (no whitespace in it)."""
        special = self.special if specials else {}
        if chunk in special:
            return special[chunk]
        return self._from_state(chunk, special, self.state_tokens if specials else {}) if chunk else ()

    def _from_state(self, s: str, special: dict, memo: dict) -> tuple[str, ...]:
        """The tokens of s from the top of spaCy's prefix/suffix loop (s not empty).

        Each pass strips a prefix, then a suffix, and the loop goes on with what is left, from its top
        again: what a state becomes depends on that string alone, so inner states are remembered
        (_inner). "word," and "(word" both leave "word", split once (or not at all: letters only).
        """
        prefix_search, suffix_search, _, _ = self.ascii_searches if s.isascii() else self.searches
        pre = prefix_search(s)  # each regex runs once per state (spaCy's loop tests the prefix, then the suffix, again)
        suf = None if pre else suffix_search(s)
        if not (pre or suf):
            return self._core(s, special)
        if self.token_match and self.token_match(s):
            return (s,)
        if s in special:
            return special[s]
        head: tuple[str, ...] = ()
        if pre:
            if pre.end() == 0:
                return self._core(s, special)
            head, s = (s[: pre.end()],), s[pre.end() :]
            suf = None if s in special else suffix_search(s)
        if not suf:
            return head + self._inner(s, special, memo)
        if suf.start() == len(s):
            return head + self._core(s, special)
        return head + self._inner(s[: suf.start()], special, memo) + (s[suf.start() :],)

    def _inner(self, s: str, special: dict, memo: dict) -> tuple[str, ...]:
        """_from_state for a state left by stripping, remembered (letters alone are no affix: one word)."""
        if s.isalpha() and s not in special:
            return (s,)
        if not s:
            return ()
        found = memo.get(s)
        if found is None:
            if len(memo) >= STATE_MEMO_MAX:
                memo.clear()
            found = memo[s] = self._from_state(s, special, memo)
        return found

    def _core(self, s: str, special: dict) -> tuple[str, ...]:
        """What is left when no affix strips: a token (URL-like or special), or split at its infixes."""
        if not s:
            return ()
        _, _, infix_matches, url_match = self.ascii_searches if s.isascii() else self.searches
        if (self.token_match and self.token_match(s)) or url_match(s):
            return (s,)
        if s in special:
            return special[s]
        infixes = infix_matches(s)
        if not infixes:
            return (s,)
        tokens, offset = [], 0
        for m in infixes:
            start, end = m.span()
            if offset == 0 and start == 0:
                continue
            if start > offset:
                tokens.append(s[offset:start])
            if end > start:
                tokens.append(s[start:end])
            offset = end
        if offset < len(s):
            tokens.append(s[offset:])
        return tuple(tokens)

    def split_chunk(self, chunk: str) -> tuple[str, ...]:
        if chunk.isalpha() and chunk not in self.special:  # letters alone are no affix: one word (most chunks)
            return (chunk,)
        tokens = self._affixes(chunk)
        if len(tokens) < 2 or self.match_starts.isdisjoint(tokens):
            return tokens
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
    not \\w, "²" is no letter). A word of letters only is both (no letter is punctuation): most words, classed
    without the per-character tests."""
    if word.isalpha():
        return NON_SYMBOL | HAS_LETTER
    return (0 if PUNCTUATION.issuperset(word) else NON_SYMBOL) | (HAS_LETTER if any(map(str.isalpha, word)) else 0)
