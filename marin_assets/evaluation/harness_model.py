"""The lm-evaluation-harness model adapter over a trained run's checkpoint (registered as `marin_checkpoint`).

Requests are tokenized with the run's tokenizer as the tokenize stage encodes documents (<s> ids), so
a continuation is scored in the context the model was trained in: an empty context is just <s>
(the harness's BLiMP sentences are scored as whole documents). As the harness's own HF model does,
the context and continuation are encoded together and the continuation's tokens are the tail beyond
the context's encoding; over-long rows keep their last `context` tokens. Rows are sorted by length
and scored in fixed-size batches of bucketed length (train.checkpoint_model), so a whole task
compiles a handful of programs and Python work per row stays small next to the forward pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

MODEL_NAME = "marin_checkpoint"
DEFAULT_BATCH = 64


@register_model(MODEL_NAME)
class CheckpointLM(LM):
    """loglikelihood and loglikelihood_rolling of a CheckpointModel (anything with .tokenizer, .context,
    .token_scores(rows, batch_rows))."""

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

    def _row(self, context: str, continuation: str) -> tuple[list[int], int]:
        """(<s> + context + continuation ids, number of continuation ids), cut to the model's context."""
        if context:
            whole, ctx = self.tokenizer.encode([context + continuation, context])
            cont = whole[len(ctx):] if whole[:len(ctx)] == ctx else self.tokenizer.encode([continuation])[0]
            ctx = whole[:len(whole) - len(cont)]
        else:
            ctx, cont = [], self.tokenizer.encode([continuation])[0]
        if not cont:
            raise ValueError(f"{MODEL_NAME}: continuation {continuation!r} encodes to no tokens")
        row = [self.tokenizer.bos_id, *ctx, *cont]
        return row[-self.model.context:], len(cont)

    def score_rows(self, rows: list[tuple[list[int], int]]) -> list[tuple[float, bool]]:
        """(sum of the last n log-probs, all of them argmax) per (row, n), batched longest first."""
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
        out: list[tuple[float, bool]] = [(0.0, False)] * len(rows)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            logprobs, greedy = self.model.token_scores([rows[i][0] for i in chunk], batch_rows=self.batch_size)
            for i, lp, gr in zip(chunk, logprobs, greedy):
                n = rows[i][1]
                out[i] = (float(lp[-n:].sum()), bool(gr[-n:].all()))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        results = self.score_rows([self._row(*req.args) for req in requests])
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
