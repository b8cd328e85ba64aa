"""py3langid's classifier over many windows at once: the byte DFA in numpy lock-step, then its own scoring.

py3langid walks its byte DFA in a Python loop per text, about 40% of cleaning time. Here a chunk of
windows walks it together (one numpy step per byte position, windows sorted by length so the ones
still running are a prefix), state visits become per-window feature counts, and each window is
scored with the very numpy product py3langid uses, on the features in the same (first visit) order.
So the probabilities are bit-identical: a single sparse product for the chunk sums in another order,
which in float32 moves a document's 4-decimal score now and then.

A window's verdict depends on its bytes alone, and windows recur (licence texts, boilerplate, copies:
about one in seven in a Debian worker's share), so verdicts are remembered per identifier, up to
MEMO_BYTES of window bytes, and a repeated window is neither walked nor scored again.

The library this stands for is cleaning.yaml `language.identifier: py3langid` (its own classify, window by
window: data/clean/language_id.py); fastpath/test_switches.py keeps the two equal on real text, and
fastpath/test_tripwires.py fails naming py3langid's version if the private attributes read here change.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

CHUNK = 1024  # windows walked together (500-character windows: a state matrix of about 2 MB)
CELLS = 1 << 21  # at most bytes x windows in one walk, whatever the lengths: a working set of tens of MB
MIN_LOCKSTEP = 16  # fewer windows than this: a numpy step per byte costs more than py3langid's own loop
MEMO_BYTES = 32 << 20  # window bytes whose verdicts are kept; when full, the memo starts afresh


def encode(text: str) -> bytes:
    """The bytes py3langid classifies (LanguageIdentifier._encode for a str)."""
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


class BatchIdentifier:
    """classify_many(texts) == [identifier.classify(t) for t in texts] for a norm_probs=True identifier."""

    def __init__(self, identifier, ptc32: np.ndarray | None = None):
        """ptc32: identifier.nb_ptc as float32, if already at hand (a mapped copy: language_model.float32_table)."""
        if not identifier._norm_probs or identifier.min_confidence is not None:
            raise ValueError("BatchIdentifier reproduces norm_probs=True without min_confidence only")
        self.identifier = identifier
        self.memo: dict[bytes, tuple[str, float]] = {}  # window bytes -> verdict
        self.memo_bytes = 0
        self.classes = list(identifier.nb_classes)
        self.alias_pairs = list(identifier._alias_pairs)
        self.nb_pc = np.asarray(identifier.nb_pc, dtype=np.float32)
        self.nb_ptc = np.ascontiguousarray(identifier.nb_ptc)
        self.nextmove = np.frombuffer(identifier.tk_nextmove, dtype=np.uint32)
        self.rowbase = (np.asarray(identifier.tk_row, dtype=np.int64) << 8).astype(np.uint32)
        # one extra state (the padding after a window ends) that emits nothing
        self.output = np.append(np.asarray(identifier.tk_output, dtype=np.int32), -1)
        self.pad_state = len(self.output) - 1
        # float32 rows are gathered per chunk: converting float16 there was a quarter of the scoring
        self.ptc32 = np.asarray(self.nb_ptc, dtype=np.float32) if ptc32 is None else ptc32
        if self.ptc32.shape != self.nb_ptc.shape or self.ptc32.dtype != np.float32:
            raise ValueError(f"ptc32: float32 {self.nb_ptc.shape} expected, got {self.ptc32.dtype} {self.ptc32.shape}")

    def classify_many(self, texts: list[str]) -> list[tuple[str, float]]:
        encoded = [encode(text) for text in texts]
        found: dict[bytes, tuple[str, float]] = {}  # this call's verdicts (the memo may start afresh meanwhile)
        first: dict[bytes, int] = {}  # each window not remembered: its first index, classified once
        for i, window in enumerate(encoded):
            if window in self.memo:
                found[window] = self.memo[window]
            else:
                first.setdefault(window, i)
        fresh = np.fromiter(first.values(), dtype=np.int64, count=len(first))
        lengths = np.fromiter((len(encoded[i]) for i in fresh), dtype=np.int64, count=len(fresh))
        rank = np.argsort(-lengths, kind="stable")
        order, lengths = fresh[rank], lengths[rank]
        start = 0
        while start < len(order):  # longest first: each chunk's first window sets its length
            end = start + max(1, min(CHUNK, CELLS // max(int(lengths[start]), 1)))
            ids = order[start:end]
            if len(ids) < MIN_LOCKSTEP:
                verdicts = [self.identifier.classify(texts[i]) for i in ids]
            else:
                verdicts = self._classify_chunk([encoded[i] for i in ids], lengths[start:end])
            for i, verdict in zip(ids.tolist(), verdicts, strict=True):
                found[encoded[i]] = verdict
                self._remember(encoded[i], verdict)
            start = end
        return [found[window] for window in encoded]

    def _remember(self, window: bytes, verdict: tuple[str, float]) -> None:
        if self.memo_bytes + len(window) > MEMO_BYTES:
            self.memo, self.memo_bytes = {}, 0
        self.memo[window] = verdict
        self.memo_bytes += len(window)

    def _classify_chunk(self, encoded: list[bytes], lengths: np.ndarray) -> list[tuple[str, float]]:
        """Windows sorted by byte length, longest first."""
        windows, rows, features, counts = self._visits(encoded, lengths)
        scores = self._scores(windows, rows, features, counts)
        # normalisation as py3langid's _decide, row-wise on the same float32 values
        scores *= (1.0 / np.sqrt(np.maximum(lengths, 1).astype(np.float64))).astype(np.float32)[:, None]
        scores -= scores.max(axis=1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=1, keepdims=True)
        for first, dupe in self.alias_pairs:
            scores[:, first] += scores[:, dupe]
            scores[:, dupe] = 0.0
        best = scores.argmax(axis=1)
        probs = scores[np.arange(windows), best]
        return [(self.classes[k], p) for k, p in zip(best.tolist(), probs.tolist())]

    def _visits(self, encoded: list[bytes], lengths: np.ndarray):
        """(windows, row of each (window, feature), feature, count), grouped by window in first visit order."""
        windows, steps = len(encoded), int(lengths[0]) if len(encoded) else 0
        # bytes as (position, window): a step reads one contiguous row
        padded = np.zeros((windows, steps), dtype=np.uint8)
        padded[np.arange(steps)[None, :] < lengths[:, None]] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        columns = np.ascontiguousarray(padded.T)
        running = np.searchsorted(-lengths, -np.arange(steps), side="left")  # windows with a byte at the step
        # window-major: a step writes a column (each window's row stays in the cache for the next steps),
        # and the features are then gathered in one contiguous pass (~10% faster than transposing after)
        states = np.full((windows, steps), self.pad_state, dtype=np.uint32)
        base = np.full(windows, self.rowbase[0], dtype=np.uint32)
        for step in range(steps):
            n = running[step]
            state = self.nextmove[base[:n] + columns[step, :n]]
            states[:n, step] = state
            base[:n] = self.rowbase[state]
        emitted = self.output[states].ravel()  # each window in time order
        at = np.flatnonzero(emitted >= 0)
        n_features = self.nb_ptc.shape[0]
        keys = (at // max(steps, 1)) * n_features + emitted[at]
        # first appearance, within each window, is py3langid's Counter order
        codes, unique = pd.factorize(keys, sort=False)
        counts = np.bincount(codes)
        return windows, unique // n_features, unique % n_features, counts

    def _scores(self, windows: int, rows: np.ndarray, features: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Raw scores: log1p(counts) @ ptc[features] + pc per window, as _sparse_score; 0 where no feature.

        Each window's rows are gathered from the whole table: compacting the chunk's features into a table
        of their own first gathered every row twice (~8% of the scoring)."""
        weights = np.log1p(counts.astype(np.float32))
        bounds = np.searchsorted(rows, np.arange(windows + 1))
        scores = np.zeros((windows, len(self.nb_pc)), dtype=np.float32)
        table, matmul, ends = self.ptc32, np.matmul, bounds.tolist()
        for w in range(windows):
            a, b = ends[w], ends[w + 1]
            if a != b:  # the same BLAS product as py3langid (same order, so the same float32 sums)
                matmul(weights[a:b], table[features[a:b]], out=scores[w])
        scores[bounds[1:] != bounds[:-1]] += self.nb_pc
        return scores
