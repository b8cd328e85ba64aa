"""`list(re.compile(pattern).finditer(s))` trying the pattern only where a match can start (spaCy's infixes).

finditer tries every branch of an alternation at every position: ~7 µs on a 50-character path, the
largest part of splitting a chunk the first time (this takes a quarter less over 265k such chunks).
Every branch of spaCy's infix pattern consumes a character of a known set first (after zero-width
lookbehinds), so a one-class regex finds those positions in C and the whole pattern is matched only
there (`match(s, pos)`: lookbehinds still see the characters before pos). No match is empty, so the
first match at a candidate at or after the last match's end is the next match finditer finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

try:  # the parser and opcodes re itself uses
    from re import _constants as sre_c
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - another Python (fastpath/test_tripwires.py fails loudly): the plain finditer
    sre_parse = sre_c = None

# re's category codes as the escapes that spell them (ascii_regex.py rebuilds classes with them too)
CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
               "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}  # fmt: skip


def _char(code: int) -> str:
    return re.escape(chr(code))


def _class_items(items: list) -> list[str] | None:
    """A character class's items as regex source; None for a negated class or an unknown item."""
    out = []
    for op, av in items:
        if op is sre_c.LITERAL:
            out.append(_char(av))
        elif op is sre_c.RANGE:
            out.append(f"{_char(av[0])}-{_char(av[1])}")
        elif op is sre_c.CATEGORY and str(av) in CATEGORIES:
            out.append(CATEGORIES[str(av)])
        else:
            return None
    return out


def _first_items(items) -> list[str] | None:
    """Class items of every character a match of the sequence `items` can start with; None when not known
    (a sequence that can match without consuming a character, or an element this does not read)."""
    for op, av in items:
        if op in (sre_c.ASSERT, sre_c.ASSERT_NOT, sre_c.AT):
            continue  # zero width: the next element consumes the first character
        if op is sre_c.LITERAL:
            return [_char(av)]
        if op is sre_c.IN:
            return _class_items(av)
        if op is sre_c.SUBPATTERN:
            return _first_items(av[-1])
        if op is sre_c.BRANCH:
            firsts = [_first_items(branch) for branch in av[1]]
            return None if any(f is None for f in firsts) else [item for f in firsts for item in f]
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) and av[0] >= 1:
            return _first_items(av[2])
        return None
    return None


def first_char_class(pattern: str) -> str | None:
    """A regex character class matching every character a match of `pattern` can start with, or None."""
    if sre_parse is None:
        return None
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE) or parsed.getwidth()[0] == 0:
        return None  # case variants, or empty matches (finditer steps past those itself)
    items = _first_items(parsed)
    return f"[{''.join(items)}]" if items else None


def all_matches(pattern: str) -> Callable[[str], list[re.Match]]:
    """matches(s): the same matches as list(re.compile(pattern).finditer(s))."""
    compiled = re.compile(pattern)
    first = first_char_class(pattern)
    if first is None:
        return lambda s: list(compiled.finditer(s))
    candidates, match = re.compile(first).finditer, compiled.match

    def matches(s: str) -> list[re.Match]:
        found, end = [], 0
        for candidate in candidates(s):
            start = candidate.start()
            if start >= end and (m := match(s, start)):
                found.append(m)
                end = m.end()
        return found

    return matches
