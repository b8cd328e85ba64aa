"""The sides of bench_near_dedup.py (ours in process, datasketch in one process or a process pool) and its
quality measures (pair agreement, the same-rule check, precision / recall against exact Jaccard).

Every side ends with the same decision rule: candidate pairs (documents sharing a band) are clustered
with union-find and all but the smallest id of a cluster are removed.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache, partial

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from marin_assets.data.clean.cleaning_recipe import DedupSettings
from marin_assets.data.dedup.dedup_keys import (
    DEFAULT_HASH_FAMILY,
    MinHasher,
    band_key_matrix,
    cluster_representatives,
    lsh_star_edges,
)


def dedup_settings() -> DedupSettings:
    """The recipe's dedup settings at the benchmark's parameters (both sides use the same)."""
    return DedupSettings(num_perm=NUM_PERM, bands=BANDS, rows=ROWS, shingle_size=SHINGLE, seed=SEED,
                         hash_family=HASH_FAMILY["name"])  # fmt: skip

NUM_PERM, BANDS, ROWS, SHINGLE, SEED = 112, 14, 8, 5, 1
HASH_FAMILY = {"name": DEFAULT_HASH_FAMILY}  # ours: the recipe default unless --hash-family says otherwise
BATCH = 10_000  # Spark's default Arrow batch size (spark.sql.execution.arrow.maxRecordsPerBatch)
SHARDS_PER_PROCESS = 4  # a few shards per process, so one slow shard does not leave a core idle


def near_dedup(ids: list[str], band_key_rows: np.ndarray, verify=None) -> set[str]:
    """Removed ids, from one row of band keys per id (rows in id order); verify(a, b) -> bool, when given,
    refuses candidate edges (what the Spark job's jaccard_edge_filter does)."""
    edges = [(ids[rep], ids[member]) for rep, member in lsh_star_edges(band_key_rows).tolist()]
    return set(cluster_representatives(e for e in edges if verify is None or verify(*e)))


def jaccard_check(docs: list[dict], threshold: float):
    """verify(a, b): exact Jaccard of the two ids' shingle sets (dedup_precision's) reaches threshold."""
    from marin_assets.data.dedup.dedup_precision import jaccard, shingle_set

    text = {d["id"]: d["text"] for d in docs}
    shingles = {}

    def verify(a: str, b: str) -> bool:
        for i in (a, b):
            if i not in shingles:
                shingles[i] = shingle_set(text[i], SHINGLE)
        return jaccard(shingles[a], shingles[b]) >= threshold

    return verify


def run_ours(docs: list[dict], threshold: float | None = None) -> tuple[set[str], list[str], np.ndarray]:
    """Ours in process: MinHasher.signatures + band_key_matrix on batches (what the Spark job's mapInArrow
    runs), lsh_star_edges (the edges near_duplicates builds in Spark), with a threshold only the edges whose
    exact Jaccard reaches it (verified removal, the recipe default), and cluster_representatives."""
    docs = sorted(docs, key=lambda d: d["id"])
    hasher = MinHasher(NUM_PERM, SHINGLE, SEED, HASH_FAMILY["name"])
    ids, keys = [], []
    for lo in range(0, len(docs), BATCH):
        batch = docs[lo : lo + BATCH]
        signatures, has_words = hasher.signatures([d["text"] for d in batch])
        keys.append(band_key_matrix(signatures[has_words], BANDS, ROWS))
        ids.extend(d["id"] for d, words in zip(batch, has_words) if words)
    band_key_rows = np.concatenate(keys)
    verify = None if threshold is None else jaccard_check(docs, threshold)
    return near_dedup(ids, band_key_rows, verify), ids, band_key_rows


@lru_cache(maxsize=2)
def _template(seed: int = SEED) -> MinHash:
    return MinHash(num_perm=NUM_PERM, seed=seed)  # its permutations are reused, as datasketch advises


def datasketch_signatures(texts: list[str], seed: int = SEED) -> np.ndarray:
    """datasketch MinHash hashvalues of word 5-grams of the lower-cased texts, one row per text."""
    template = _template(seed)
    rows = np.empty((len(texts), NUM_PERM), dtype=np.uint64)
    for r, text in enumerate(texts):
        words = text.lower().split()
        grams = {" ".join(gram) for gram in zip(*(words[i:] for i in range(SHINGLE)))} or {" ".join(words)}
        mh = MinHash(num_perm=NUM_PERM, seed=seed, permutations=template.permutations, scheme=template.scheme)
        mh.update_batch([gram.encode() for gram in grams])
        rows[r] = mh.hashvalues
    return rows


def datasketch_decisions(ids: list[str], signatures: np.ndarray) -> tuple[set[str], set[tuple[str, str]]]:
    """MinHashLSH query + insert per document, then the union-find rule: (removed ids, candidate pairs)."""
    lsh = MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
    scheme, pairs = _template().scheme, set()
    for doc_id, row in zip(ids, signatures):
        mh = LeanMinHash(seed=SEED, hashvalues=row, scheme=scheme)
        for other in lsh.query(mh):
            pairs.add(tuple(sorted((doc_id, other))))
        lsh.insert(doc_id, mh)
    return set(cluster_representatives(pairs)), pairs


def run_datasketch(docs: list[dict]) -> tuple[set[str], set[tuple[str, str]], dict]:
    """datasketch in one process: (removed, candidate pairs, signature per id)."""
    ids = [d["id"] for d in docs]
    signatures = datasketch_signatures([d["text"] for d in docs])
    return *datasketch_decisions(ids, signatures), dict(zip(ids, signatures))


class DatasketchPool:
    """datasketch at N cores, as a user would run it: MinHash signatures (the parallel part) over shards in
    a ProcessPoolExecutor of N processes, then MinHashLSH and the union-find rule in the parent."""

    def __init__(self, processes: int):
        self.processes = processes
        # forkserver: the parent may hold a Spark JVM gateway's threads, which fork does not copy safely.
        self.pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("forkserver"))
        list(self.pool.map(datasketch_signatures, [["warm up the workers"]] * processes * 2))  # not measured

    def __call__(self, docs: list[dict]) -> tuple[set[str], set[tuple[str, str]], dict]:
        ids, signatures = [d["id"] for d in docs], self.signatures(docs)
        return *datasketch_decisions(ids, signatures), dict(zip(ids, signatures))

    def signatures(self, docs: list[dict], seed: int = SEED) -> np.ndarray:
        texts = [d["text"] for d in docs]
        step = max(1, -(-len(texts) // (self.processes * SHARDS_PER_PROCESS)))
        shards = [texts[lo : lo + step] for lo in range(0, len(texts), step)]
        return np.concatenate(list(self.pool.map(partial(datasketch_signatures, seed=seed), shards)))

    def close(self) -> None:
        self.pool.shutdown()


def bucket_pairs(ids: list[str], band_key_rows: np.ndarray) -> set[tuple[str, str]]:
    """All candidate pairs (documents sharing a band key), for the agreement only (not timed)."""
    buckets = defaultdict(list)
    for doc_id, keys in zip(ids, band_key_rows.tolist()):
        for band, key in enumerate(keys):
            buckets[band, key].append(doc_id)
    return {pair for members in buckets.values() for pair in itertools.combinations(sorted(members), 2)}


def check_same_rule(peer_removed, peer_pairs, peer_signatures) -> None:
    """Our LSH + clustering on datasketch's signatures must reproduce datasketch's decisions exactly."""
    ids = sorted(peer_signatures)
    rows = band_key_matrix(np.stack([peer_signatures[i] for i in ids]), BANDS, ROWS)
    same_removed = near_dedup(ids, rows) == peer_removed
    same_pairs = bucket_pairs(ids, rows) == peer_pairs
    print(f"same rule: ours on datasketch's signatures removes the same documents: {same_removed}, "
          f"finds the same candidate pairs: {same_pairs}")  # fmt: skip
    if not (same_removed and same_pairs):
        raise SystemExit("decision rule differs from datasketch's")


def exact_truth(docs: list[dict], threshold: float) -> set[tuple[str, str]]:
    """Every pair with exact Jaccard >= threshold of the 5-gram shingle sets (all pairs, sparse products)."""
    from scipy import sparse

    from marin_assets.data.dedup.dedup_precision import shingle_set

    ids = sorted(d["id"] for d in docs)
    text = {d["id"]: d["text"] for d in docs}
    vocab: dict[tuple, int] = {}
    rows, cols = [], []
    for r, doc_id in enumerate(ids):
        for shingle in shingle_set(text[doc_id], SHINGLE):
            rows.append(r)
            cols.append(vocab.setdefault(shingle, len(vocab)))
    a = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(ids), len(vocab)))
    sizes = np.asarray(a.sum(axis=1)).ravel()
    truth = set()
    for lo in range(0, len(ids), 500):  # blocks of rows: a dense 500 x N intersection matrix at a time
        inter = (a[lo : lo + 500] @ a.T).toarray()
        union = sizes[lo : lo + 500, None] + sizes[None, :] - inter
        for i, j in zip(*np.nonzero(inter >= threshold * np.maximum(union, 1))):
            if lo + i < j:
                truth.add((ids[lo + i], ids[j]))
    return truth


def print_precision_recall(corpus: list[dict], threshold: float) -> None:
    """Each side's candidate pairs scored against exact-Jaccard ground truth (all pairs compared)."""
    truth = exact_truth(corpus, threshold)
    _, ids, band_key_rows = run_ours(corpus)
    _, peer_pairs, _ = run_datasketch(corpus)
    print(f"candidate pairs vs exact Jaccard >= {threshold} on {len(corpus):,} documents (all pairs compared):")
    for name, pairs in (("ours (14 bands x 8 rows)", bucket_pairs(ids, band_key_rows)),
                        ("datasketch (14 x 8)", peer_pairs)):  # fmt: skip
        hit = len(pairs & truth)
        print(f"  {name:<28} precision {hit / max(1, len(pairs)):.4f}  recall {hit / max(1, len(truth)):.4f}  "
              f"({len(pairs):,} candidate pairs, {len(truth):,} true pairs)")  # fmt: skip


def print_removal_quality(name: str, docs: list[dict], kept_for: dict[str, str], threshold: float,
                          planted: set[str], of: dict[str, str] | None = None) -> tuple[float, float]:
    """Precision of the removed pairs (each removed document with the document kept in its place) against
    exact Jaccard of the same shingles, and recall on the planted near duplicates; with `of` (copy -> its
    original) also the recall on the planted copies that are true near duplicates at the threshold (a few
    changed words in a short document change most of its shingles). Returns (precision, recall)."""
    check = jaccard_check(docs, threshold)
    precision = sum(check(member, rep) for member, rep in kept_for.items()) / max(1, len(kept_for))
    recall = len(planted & set(kept_for)) / max(1, len(planted))
    true = {p for p in planted if p in (of or {}) and check(p, of[p])}
    on_true = f", {len(true & set(kept_for)) / max(1, len(true)):.4f} of the {len(true):,} at J >= {threshold}" if of else ""
    print(f"  {name:<36} removed {len(kept_for):,}: precision of removed pairs {precision:.4f} (exact Jaccard >= "
          f"{threshold}), planted near-duplicate recall {recall:.4f} ({len(planted):,} planted){on_true}")  # fmt: skip
    return precision, recall


def print_seed_reference(docs: list[dict], pool: DatasketchPool, peer: set, threshold: float) -> None:
    """What two independent hash functions agree on for this corpus: datasketch itself at another seed
    (same algorithm, other permutations) against datasketch at SEED. A hash family other than datasketch's
    own is one more independent draw, so its raw agreement lands near this figure, not above it."""
    ids = [d["id"] for d in docs]
    other = bucket_pairs(ids, band_key_matrix(pool.signatures(docs, seed=SEED + 1), BANDS, ROWS))
    raw = len(other & peer) / max(1, len(other | peer))
    print(f"reference, datasketch seed {SEED + 1} vs datasketch seed {SEED} (what one more independent hash function "
          f"reaches): raw pair agreement {raw:.4f}")  # fmt: skip
    print_verified_agreement(docs, other, peer, threshold, label=f"datasketch seed {SEED + 1}")


def print_verified_agreement(docs: list[dict], ours: set, peer: set, threshold: float, label: str = "ours") -> None:
    """Pair agreement on the pairs each side would merge with verify_pairs (exact Jaccard >= threshold),
    and where the raw disagreement lies: the exact Jaccard of the pairs only one side finds. Both hash
    families flag a pair near the threshold by chance (14 x 8 bands: P = 0.57 at J = 0.7), and a big
    bucket counts all its pairs, so the raw figure moves with a few borderline clusters."""
    from marin_assets.data.dedup.dedup_precision import jaccard, shingle_set

    text = {d["id"]: d["text"] for d in docs}
    shingles = {i: shingle_set(text[i], SHINGLE) for i in {i for pair in ours | peer for i in pair}}
    exact = {pair: jaccard(shingles[pair[0]], shingles[pair[1]]) for pair in ours | peer}
    differ = np.array([exact[p] for p in ours ^ peer])
    if differ.size:
        print(f"pairs found by one side only: {differ.size:,}, exact Jaccard median {np.median(differ):.3f}, "
              f"{np.mean((differ >= 0.5) & (differ < 0.85)):.1%} in [0.5, 0.85)")  # fmt: skip
    kept_ours, kept_peer = ({p for p in s if exact[p] >= threshold} for s in (ours, peer))
    both = len(kept_ours & kept_peer) / max(1, len(kept_ours | kept_peer))
    print(f"pair agreement on verified pairs (exact Jaccard >= {threshold}, what verify_pairs merges) {both:.4f} "
          f"({len(kept_ours):,} {label}, {len(kept_peer):,} datasketch); the raw figure above is the target's")  # fmt: skip
