"""Text repairs a reader makes, each counted by reason: nothing is repaired silently.

JSON can spell code points UTF-8 cannot hold (a lone surrogate such as "\\ud800"); such a string
cannot be written as Parquet/UTF-8, so it becomes U+FFFD and the record says so in its metadata
under REPAIRS_KEY ({reason: count}); the cleaning job sums those counts into its stats.
"""

from __future__ import annotations

import re
from collections import Counter

REPAIRS_KEY = "_repairs"
LONE_SURROGATE = "lone_surrogate"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
# One regex pass: two substring searches each stopped at every backslash (JSON writes each newline as "\\n").
_ESCAPE_RE = re.compile(r"\\[uU]")


def repair_value(value, counts: Counter):
    """`value` (str, or JSON lists/dicts of them) with lone surrogates replaced by U+FFFD, counted."""
    if isinstance(value, str):
        fixed, n = _SURROGATE_RE.subn("\ufffd", value)
        if n:
            counts[LONE_SURROGATE] += n
        return fixed
    if isinstance(value, list):
        return [repair_value(v, counts) for v in value]
    if isinstance(value, dict):
        return {repair_value(k, counts): repair_value(v, counts) for k, v in value.items()}
    return value


def may_need_repair(json_text: str) -> bool:
    """Only a \\u escape can produce a surrogate from valid UTF-8 JSON (cheap pre-check)."""
    return _ESCAPE_RE.search(json_text) is not None
