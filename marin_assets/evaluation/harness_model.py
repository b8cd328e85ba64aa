"""The lm-evaluation-harness model adapter over a trained run's checkpoint (registered as `marin_checkpoint`).

Requests are tokenized with the run's tokenizer as the tokenize stage encodes documents (<s> ids), so
a continuation is scored in the context the model was trained in: an empty context is just <s>
(the harness's BLiMP sentences are scored as whole documents). As the harness's own HF model does,
the context and continuation are encoded together and the continuation's tokens are the tail beyond
the context's encoding; over-long rows keep their last `context` tokens. Rows are sorted by length
and scored in fixed-size batches of bucketed length (train.checkpoint_model), so a whole task
compiles a handful of programs and Python work per row stays small next to the forward pass.
Requests are tokenized in chunks and each batch is dispatched before the previous one is read back
(JAX computes asynchronously), so tokenizing, padding and summing overlap the forward pass.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

MODEL_NAME = "marin_checkpoint"
DEFAULT_BATCH = 64
CHUNK_BATCHES = 16   # requests tokenized per chunk: 16 batches (sorting within a chunk fills the buckets as well)
IN_FLIGHT = 2        # batches dispatched ahead of the one being read back


@register_model(MODEL_NAME)
class CheckpointLM(LM):
    """loglikelihood and loglikelihood_rolling of a CheckpointModel (anything with .tokenizer, .context,
    .dispatch_scores(rows, batch_rows) -> pending with .result())."""

    def __init__(self, model: Any = None, run_dir: str | None = None, step: int | None = None,
                 batch_size: int = DEFAULT_BATCH, **_):
        super().__init__()
        if model is None:
            if run_dir is None:
                raise ValueError(f"{MODEL_NAME}: pass model_args run_dir=<training run folder> (or a loaded model)")
            from marin_assets.train.checkpoint_model import CheckpointModel

            model = CheckpointModel.load(run_dir, step=None if step is None else int(step))
        self.model, self.batch_size = model, int(batch_size)
        self.tokenizer = model.tokenizer

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None) -> "CheckpointLM":
        args = dict(kv.split("=", 1) for kv in arg_string.split(",") if kv)
        return cls(**args, **{k: v for k, v in (additional_config or {}).items() if v is not None})

    def _rows(self, pairs: list[tuple[str, str]]) -> list[tuple[list[int], int]]:
        """(<s> + context + continuation ids, number of continuation ids) per pair, cut to the model's context.

        All texts are encoded in a few batched calls (one per kind), not one call per request."""
        encode = self.tokenizer.encode
        with_ctx = [i for i, (ctx, _) in enumerate(pairs) if ctx]
        wholes = encode([pairs[i][0] + pairs[i][1] for i in with_ctx])
        contexts = encode([pairs[i][0] for i in with_ctx])
        alone = encode([cont for _, cont in pairs])  # the continuation alone: empty contexts, and the fallback
        rows = []
        split = dict(zip(with_ctx, zip(wholes, contexts)))
        for i, (_, continuation) in enumerate(pairs):
            ctx, cont = [], alone[i]
            if i in split:
                whole, ctx = split[i]
                if whole[:len(ctx)] == ctx:  # a merge across the boundary keeps the context's own ids
                    cont = whole[len(ctx):]
            if not cont:
                raise ValueError(f"{MODEL_NAME}: continuation {continuation!r} encodes to no tokens")
            row = [self.tokenizer.bos_id, *ctx, *cont]
            rows.append((row[-self.model.context:], len(cont)))
        return rows

    def score_rows(self, rows: list[tuple[list[int], int]]) -> list[tuple[float, bool]]:
        """(sum of the last n log-probs, all of them argmax) per (row, n), batched longest first."""
        return self.score_chunks([rows])

    def score_chunks(self, chunks: Iterable[list[tuple[list[int], int]]]) -> list[tuple[float, bool]]:
        """score_rows over the concatenated chunks, pipelined: while up to IN_FLIGHT batches compute, the
        next batch is padded and dispatched (and the next chunk, if `chunks` is lazy, tokenized)."""
        out: list[tuple[float, bool]] = []
        pending: deque = deque()

        def finish():
            offset, chunk, counts, scores = pending.popleft()
            for i, n, lp, gr in zip(chunk, counts, *scores.result()):
                out[offset + i] = (float(lp[-n:].sum()), bool(gr[-n:].all()))

        for rows in chunks:
            offset = len(out)
            out.extend([(0.0, False)] * len(rows))
            order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
            for start in range(0, len(order), self.batch_size):
                chunk = order[start:start + self.batch_size]
                scores = self.model.dispatch_scores([rows[i][0] for i in chunk], batch_rows=self.batch_size)
                pending.append((offset, chunk, [rows[i][1] for i in chunk], scores))
                while len(pending) > IN_FLIGHT:
                    finish()
        while pending:
            finish()
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        pairs = [req.args for req in requests]
        size = self.batch_size * CHUNK_BATCHES
        results = self.score_chunks(self._rows(pairs[i:i + size]) for i in range(0, len(pairs), size))
        for req, result in zip(requests, results):
            self.cache_hook.add_partial("loglikelihood", req.args, result)
        return results

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        """Whole-string log-likelihood: disjoint windows of the model's context, each conditioned on what precedes it."""
        rows, owners = [], []
        for index, req in enumerate(requests):
            ids = self.tokenizer.encode([req.args[0]])[0]
            windows = get_rolling_token_windows(token_list=ids, prefix_token=self.tokenizer.bos_id,
                                                max_seq_len=self.model.context - 1, context_len=1)
            for context, target in map(make_disjoint_window, windows):
                rows.append(([*context, *target], len(target)))
                owners.append(index)
        totals = np.zeros(len(requests))
        for owner, (logprob, _) in zip(owners, self.score_rows(rows)):
            totals[owner] += logprob
        for req, total in zip(requests, totals):
            self.cache_hook.add_partial("loglikelihood_rolling", req.args, float(total))
        return [float(t) for t in totals]

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        raise NotImplementedError(
            f"{MODEL_NAME} scores text (loglikelihood, loglikelihood_rolling) but does not generate: "
            "use a task set whose tasks are multiple_choice, loglikelihood or loglikelihood_rolling")
