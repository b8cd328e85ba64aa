"""A regex's ASCII restriction: a pattern that finds the same matches as the original on ASCII text.

spaCy's affix patterns carry character classes of thousands of letters and symbols and branches for
non-ASCII punctuation. On a chunk of ASCII characters (most chunks a worker splits for the first
time: paths, versions, identifiers) none of that can match, yet the regex engine still tries it:
restricted, the suffix search runs ~3x and the infix ~1.7x faster on such chunks.

The pattern is rebuilt from the parse tree `re` itself uses: each character class keeps its ASCII
members (tested against the class), a literal outside ASCII can never match, so the branch holding
it goes (an optional item becomes empty, a negative lookaround always holds). Capturing groups become
non-capturing: callers use only where matches start and end. Constructs this does not read (flags,
back references, atomic groups) give None, and the caller keeps the original pattern.
"""

from __future__ import annotations

import re

from marin_assets.fastpath.words.infix_search import CATEGORIES, sre_c, sre_parse  # sre_*: None on another Python

_NEVER = None  # an item that cannot match any ASCII text
_AT = {"AT_BEGINNING": "^", "AT_END": "$", "AT_BEGINNING_STRING": r"\A", "AT_END_STRING": r"\Z",
       "AT_BOUNDARY": r"\b", "AT_NON_BOUNDARY": r"\B"}  # fmt: skip
ASCII_CHARS = [chr(code) for code in range(128)]


class Unsupported(Exception):
    pass


def ascii_only(pattern: str) -> str | None:
    """A pattern with the same matches (start, end) as `pattern` on every string of ASCII characters,
    or None when the pattern uses a construct this does not rebuild."""
    if sre_parse is None:
        return None
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & ~re.UNICODE:  # inline flags change what classes and literals mean
        return None
    try:
        source = _sequence(parsed, top=True)
    except Unsupported:
        return None
    return "(?!)" if source is _NEVER else source


def _sequence(items, top: bool = False) -> str | None:
    parts = []
    for op, av in items:
        part = _item(op, av, top and len(items) == 1)
        if part is _NEVER:
            return _NEVER
        parts.append(part)
    return "".join(parts)


def _char_class(source: str) -> str | None:
    """The ASCII members of a one-character pattern, as a class (None when there are none)."""
    test = re.compile(source).fullmatch
    members = [c for c in ASCII_CHARS if test(c)]
    if not members:
        return _NEVER
    return re.escape(members[0]) if len(members) == 1 else "[" + "".join(map(re.escape, members)) + "]"


def _class_source(items) -> str:
    out = []
    for op, av in items:
        if op is sre_c.NEGATE:
            out.append("^")
        elif op is sre_c.LITERAL:
            out.append(re.escape(chr(av)))
        elif op is sre_c.RANGE:
            out.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is sre_c.CATEGORY and str(av) in CATEGORIES:
            out.append(CATEGORIES[str(av)])
        else:
            raise Unsupported(f"class item {op}")
    return "[" + "".join(out) + "]"


def _item(op, av, top: bool) -> str | None:
    if op is sre_c.LITERAL:
        return re.escape(chr(av)) if av < 128 else _NEVER
    if op is sre_c.NOT_LITERAL:
        return _char_class(f"[^{re.escape(chr(av))}]")
    if op is sre_c.IN:
        return _char_class(_class_source(av))
    if op is sre_c.ANY:
        return "."
    if op is sre_c.AT:
        return _AT[str(av)]
    if op is sre_c.BRANCH:
        branches = [b for b in (_sequence(branch) for branch in av[1]) if b is not _NEVER]
        if not branches:
            return _NEVER
        joined = "|".join(branches)
        return joined if top else f"(?:{joined})"  # top level: the branches stay visible (suffix_search)
    if op is sre_c.SUBPATTERN:
        _group, add_flags, del_flags, inner = av
        if add_flags or del_flags:
            raise Unsupported("inline flags")
        body = _sequence(inner)
        return _NEVER if body is _NEVER else f"(?:{body})"
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
        low, high, inner = av
        body = _sequence(inner)
        if body is _NEVER:
            return "" if low == 0 else _NEVER
        bounds = f"{{{low},{'' if high is sre_c.MAXREPEAT else high}}}"
        return f"(?:{body}){bounds}{'?' if op is sre_c.MIN_REPEAT else ''}"
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        direction, inner = av
        body = _sequence(inner)
        if body is _NEVER:  # a lookaround that cannot match: a positive one fails, a negative one holds
            return _NEVER if op is sre_c.ASSERT else ""
        kind = ("=" if op is sre_c.ASSERT else "!") if direction > 0 else ("<=" if op is sre_c.ASSERT else "<!")
        return f"(?{kind}{body})"
    raise Unsupported(str(op))
