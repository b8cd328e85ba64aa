"""`re.compile(pattern).search` for an alternation whose branches all end at `$` (spaCy's suffix
regex), that looks only at the end of the string where it can.

A search tries every start position, and at each one every branch: on a 15-character chunk
spaCy's 82-branch suffix regex cost ~9 µs, and the tokenizer asks it again after each suffix it
strips. A branch of at most w characters that ends at the end can only start in the last w
positions, so the bounded branches are searched from there (`pos`: lookbehinds still see the
characters before it), and the few unbounded ones (`\\.\\.+$`) over the whole string. All branches
end at the end, so the leftmost start of either search is the match the whole regex finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

try:  # the parser re itself uses; only for branch widths
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - another Python (fastpath/test_tripwires.py fails loudly): search the plain way
    sre_parse = None

MAX_TAIL = 64  # a branch wider than this is searched over the whole string


def top_level_branches(pattern: str) -> list[str]:
    """The branches of `pattern`'s outermost alternation ('|' outside groups, classes and escapes)."""
    branches, current, depth, in_class, escaped = [], [], 0, False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            branches.append("".join(current))
            current = []
            continue
        current.append(ch)
    branches.append("".join(current))
    return branches


def end_anchored_search(pattern: str) -> Callable[[str], re.Match | None]:
    """search(s): the same match as re.compile(pattern).search(s) when every branch ends with `$`;
    the plain search otherwise."""
    plain = re.compile(pattern).search
    branches = top_level_branches(pattern)
    if sre_parse is None or not all(b.endswith("$") and not b.endswith("\\$") for b in branches):
        return plain
    widths = [sre_parse.parse(b).getwidth()[1] for b in branches]
    bounded = [(b, w) for b, w in zip(branches, widths, strict=True) if w <= MAX_TAIL]
    unbounded = [b for b, w in zip(branches, widths, strict=True) if w > MAX_TAIL]
    if not bounded:
        return plain
    tail_width = max(w for _, w in bounded)
    tail = re.compile("|".join(b for b, _ in bounded)).search
    whole = re.compile("|".join(unbounded)).search if unbounded else None

    def search(s: str) -> re.Match | None:
        found = tail(s, max(0, len(s) - tail_width - 1))  # - 1: `$` also matches before a final newline
        if whole is None:
            return found
        other = whole(s)
        if other is None or (found is not None and found.start() <= other.start()):
            return found
        return other

    return search
