"""Gopher repetition filter (Rae et al. 2021, table A1), same rules and defaults as datatrove's.

Duplicate lines/paragraphs and repeated word n-grams, as fractions of the document's characters.
N-grams are compared by vectorised hashes instead of joined strings, which is what makes it fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from marin_assets.core.recipes import Recipe
from marin_assets.data.clean.filters.filter_base import QualityFilter, Rule, cached, register
from marin_assets.data.clean.filters.text import HASH_MULTIPLIER, TextView, find_duplicates
from marin_assets.data.curate.sorted_membership import in_sorted

_PARAGRAPH_RE = re.compile(r"\n{2,}")
_LINE_RE = re.compile(r"\n+")


class GopherRepetitionConfig(Recipe):
    """Thresholds; None switches a rule off. n-gram maps are {n: max character fraction}."""

    dup_line_frac: float | None = 0.3
    dup_para_frac: float | None = 0.3
    dup_line_char_frac: float | None = 0.2
    dup_para_char_frac: float | None = 0.2
    top_n_grams: dict[int, float] = {2: 0.2, 3: 0.18, 4: 0.16}
    dup_n_grams: dict[int, float] = {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10}


def split_paragraphs(text: str) -> list[str]:
    """_PARAGRAPH_RE.split(text); without three newlines in a row every break is exactly two (str.split)."""
    return text.split("\n\n") if "\n\n\n" not in text else _PARAGRAPH_RE.split(text)


def split_lines(text: str) -> list[str]:
    """_LINE_RE.split(text) with str.split: inner empty parts dropped, a leading or trailing one kept."""
    parts = text.split("\n")
    if len(parts) < 3:
        return parts
    return [parts[0], *filter(None, parts[1:-1]), parts[-1]]


def _exceeds(value: float, threshold: float | None) -> bool:
    return threshold is not None and value > threshold


def top_ngram_chars(view: TextView, n: int) -> int:
    """Characters covered by the most frequent n-gram (its length x its count; ties: first seen)."""
    return top_ngram(view, n)[1]


def top_ngram(view: TextView, n: int) -> tuple[int, int]:
    """(count of the most frequent n-gram, top_ngram_chars)."""
    hashes = view.ngram_hashes(n)
    ordered = np.sort(hashes)  # a plain sort: much cheaper than a stable argsort
    run_starts = ordered[1:] != ordered[:-1]
    if run_starts.all():  # all distinct: the first n-gram, once
        top, first = 1, 0
    else:
        edges = np.flatnonzero(np.concatenate(([True], run_starts, [True])))  # each run's start, then the end
        counts = edges[1:] - edges[:-1]
        top = int(counts.max())
        first = int(np.argmax(in_sorted(hashes, ordered[edges[:-1][counts == top]])))
    offsets = view.word_char_offsets  # the n-gram's words joined by single spaces
    return top, (int(offsets[first + n] - offsets[first]) + n - 1) * top


def _repeated_positions(hashes: np.ndarray) -> np.ndarray:
    """The positions whose hash occurs more than once, in order."""
    ordered = np.sort(hashes)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(in_sorted(hashes, ordered[1:][same]))


def _previous_same(hashes: np.ndarray) -> np.ndarray:
    """For each entry, the index of the last earlier entry with the same hash, or -1."""
    order = np.argsort(hashes, kind="stable")  # equal hashes stay in position order
    ordered = hashes[order]
    same = ordered[1:] == ordered[:-1]
    previous = np.full(len(hashes), -1, dtype=np.int64)
    previous[order[1:][same]] = order[:-1][same]
    return previous


def _as_dict(positions: np.ndarray, previous: np.ndarray) -> dict[int, int]:
    has = previous >= 0
    return dict(zip(positions[has].tolist(), positions[previous[has]].tolist()))


def earlier_occurrences(hashes: np.ndarray) -> dict[int, int]:
    """{position: the last earlier position with the same hash} for the positions that have one, in order."""
    positions = _repeated_positions(hashes)
    return _as_dict(positions, _previous_same(hashes[positions])) if len(positions) else {}


def repeated_cover_chars(view: TextView, positions: np.ndarray, n: int) -> int:
    """Characters of the words inside the n-grams at `positions` (sorted, distinct).

    With the positions of the repeated n-grams, no m-gram (m >= n) has more duplicated_ngram_chars:
    each repeated m-gram is made of repeated n-grams, so its words are among these.
    """
    if not len(positions):
        return 0
    at = np.asarray(positions)
    delta = np.zeros(view.n_words + 1, dtype=np.int64)
    delta[at] += 1
    delta[at + n] -= 1
    return int(view.word_lengths[np.cumsum(delta[:-1]) > 0].sum())


def earlier_occurrences_by_n(view: TextView, first: int, members: np.ndarray | None = None
                             ) -> Iterator[tuple[int, dict[int, int]]]:  # fmt: skip
    """(n, earlier_occurrences of the n-grams) for n = first, first + 1, ... (the caller stops).

    `first` compares all n-grams; members: their _repeated_positions, when the caller has them. A
    longer n-gram repeats only where its first n-1 words repeat, so each later n looks only at the
    positions of a repeated (n-1)-gram, extending their hashes exactly as ngram_hashes does.
    """
    hashes = view.ngram_hashes(first)
    members = _repeated_positions(hashes) if members is None else np.asarray(members, dtype=np.int64)
    current = hashes[members]  # the members' n-gram hashes
    n, n_words, word_hashes = first, view.n_words, view.word_hashes
    while True:
        previous = _previous_same(current)
        yield n, _as_dict(members, previous)
        n += 1
        keep = previous >= 0  # in a repeated n-gram (a repeat or the one it repeats), and an (n+1)-gram still fits
        keep[previous[keep]] = True
        keep &= members + n <= n_words
        members = members[keep]
        current = current[keep] * HASH_MULTIPLIER + word_hashes[members + (n - 1)]  # uint64: wraps as ngram_hashes


def duplicated_ngram_chars(view: TextView, n: int, prev_of: dict[int, int] | None = None) -> int:
    """Characters in repeated n-grams, scanning left to right and skipping past each repeat.

    The scan (datatrove's find_all_duplicate) remembers the n-grams it visits; a repeat's n words
    are skipped, so the n-grams starting inside it are never remembered. Only positions whose hash
    occurred before can be repeats, so just those are visited, in order: one is a repeat when an
    earlier occurrence was remembered (neither a repeat nor skipped). prev_of: the n-grams'
    earlier_occurrences (in position order, as it gives them), when the caller has them.

    Occurrences of one n-gram are one chain of prev_of links from its first occurrence (its root). One
    was remembered before pos when the root was (no skip took it) or when a later one was (a set of such
    roots), so each position costs O(1).
    Walking the chain back past forgotten occurrences cost O(repeats) each: quadratic in a long
    periodic text (a 30-word pattern repeated over 1M words: ~10^9 steps).
    """
    if prev_of is None:
        prev_of = earlier_occurrences(view.ngram_hashes(n))
    if not prev_of:
        return 0
    offsets = view.word_char_offsets
    forgotten: set[int] = set()  # repeats and the positions their skips jumped over
    root_of: dict[int, int] = {}  # position -> its n-gram's first occurrence
    remembered_later: set[int] = set()  # roots a skip took whose n-gram a later occurrence remembered
    repeated = idx = 0
    for pos, earlier in prev_of.items():  # in position order
        root = root_of[pos] = root_of.get(earlier, earlier)
        if pos < idx:
            continue  # skipped: never remembered
        # the root comes before pos, so whether a skip took it is settled
        if root in forgotten and root not in remembered_later:
            remembered_later.add(root)  # pos is the first remembered occurrence
            continue
        repeated += int(offsets[pos + n] - offsets[pos])
        forgotten.update(range(pos, pos + n))
        idx = pos + n
    return repeated


def _count_duplicates(view: TextView, by: str) -> tuple[int, int, int]:
    parts = split_paragraphs(view.text.strip()) if by == "paragraphs" else split_lines(view.text)
    return len(parts), *find_duplicates(parts)


def _duplicates(view: TextView, by: str) -> tuple[int, int, int]:
    """(parts, repeated parts, characters in repeated parts) of the text split into paragraphs or lines."""
    return cached(view, _count_duplicates, by)


def _top_ngram_could_trip(n: int):
    def could_trip(view: TextView, cfg, limit: float) -> bool:
        if view.n_words < n:
            return False
        bound = view.shared.get("top_ngram_bound")  # (n, count) of the last top n-gram counted
        # no longer n-gram occurs more often: even the longest n-gram, that often, may stay under the limit
        return not (bound and bound[0] < n
                    and bound[1] * int(view.ngram_char_lengths(n, 1).max()) / len(view.text) <= limit)

    return could_trip


def _top_ngram_frac(n: int):
    def measure(view: TextView, cfg) -> float:
        count, chars = top_ngram(view, n)
        view.shared["top_ngram_bound"] = (n, count)
        return chars / len(view.text)

    return measure


def _dup_ngrams_could_trip(view: TextView, cfg, limit: float) -> bool:
    """The repeated n-grams of the shortest n cover enough text for some rule to trip (computed once)."""

    return cached(view, _covers_enough, cfg)


def _covers_enough(view: TextView, cfg) -> bool:
    first = min(cfg.dup_n_grams)
    members = _repeated_positions(view.ngram_hashes(first))
    view.shared["dup_ngrams"] = (earlier_occurrences_by_n(view, first, members), {})
    return repeated_cover_chars(view, members, first) / len(view.text) > min(cfg.dup_n_grams.values())


def _dup_ngram_frac(n: int):
    def measure(view: TextView, cfg) -> float:
        by_n, found = view.shared["dup_ngrams"]  # n -> earlier occurrences, computed in increasing n
        while n not in found:
            m, prev_of = next(by_n)
            found[m] = prev_of
        return duplicated_ngram_chars(view, n, prev_of=found[n]) / len(view.text)  # all of them: the value users see

    return measure


@register("gopher_repetition")
class GopherRepetition(QualityFilter):
    Config = GopherRepetitionConfig
    on_by_default, default_position = True, 10
    fixed_rules = (
        Rule("empty", lambda v, c: len(v.text), 1, "<"),
        Rule("dup_para_frac", lambda v, c: _duplicates(v, "paragraphs")[1] / _duplicates(v, "paragraphs")[0],
             "dup_para_frac", digits=4),
        Rule("dup_para_char_frac", lambda v, c: _duplicates(v, "paragraphs")[2] / len(v.text),
             "dup_para_char_frac", digits=4),
        Rule("dup_line_frac", lambda v, c: _duplicates(v, "lines")[1] / _duplicates(v, "lines")[0],
             "dup_line_frac", digits=4),
        Rule("dup_line_char_frac", lambda v, c: _duplicates(v, "lines")[2] / len(v.text),
             "dup_line_char_frac", digits=4),
    )  # fmt: skip

    def rules_for(self, cfg: GopherRepetitionConfig) -> tuple[Rule, ...]:
        """The fixed rules, then one per n-gram threshold of the options (`plan` builds them once per options)."""
        top = (Rule(f"top_{n}_gram", _top_ngram_frac(n), frac, digits=4, could_trip=_top_ngram_could_trip(n))
               for n, frac in cfg.top_n_grams.items())
        dup = (Rule(f"duplicated_{n}_n_grams", _dup_ngram_frac(n), frac, digits=4, could_trip=_dup_ngrams_could_trip)
               for n, frac in cfg.dup_n_grams.items())
        return (*self.fixed_rules, *top, *dup)

    def kept(self, view: TextView, cfg, stats: dict) -> TextView:
        stats["words"] = view.n_words
        return view


def check(view: TextView, cfg: GopherRepetitionConfig) -> str | None:
    """The first failing rule's name, or None."""
    found = GopherRepetition().reject(view, cfg)
    return found.rule if found else None
