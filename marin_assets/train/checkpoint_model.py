"""A trained run's checkpoint as a callable language model: MaxText's own model and restore, jit-compiled.

`CheckpointModel.load(run_dir)` rebuilds the model from the run's own `maxtext.yml` (written by
train.maxtext_config, so the architecture is exactly the trained one), and restores the params of
`checkpoints/<step>/items` with MaxText's `model_creation_utils.from_pretrained` (the loader MaxText's
own inference and RL use; it restores only the params, not the optimizer state). The forward pass is
MaxText's decoder called as its loss does (`enable_dropout=False`), one jit per padded shape.

Padding-aware: a batch of token rows of different lengths is right-padded to a bucketed length
(powers of two up to the run's `max_target_length`) with segment id 0 on the padding, so a row's
log-probabilities do not depend on what it was batched with; rows longer than the context are refused.
Imports JAX and MaxText lazily: the orchestrator imports this module without paying for them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from marin_assets.train.checkpoints import checkpoint_steps

CONFIG_FILE = "maxtext.yml"
MIN_BUCKET = 16


def bucket_length(longest: int, context: int) -> int:
    """The padded length for a batch whose longest row is `longest` (a power of two, capped at the context)."""
    if longest > context:
        raise ValueError(f"a row of {longest} tokens exceeds the model's context of {context} tokens")
    length = MIN_BUCKET
    while length < longest:
        length *= 2
    return min(length, context)


def pad_rows(rows: list[np.ndarray] | np.ndarray, length: int, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, segment ids) int32 (batch, length): rows right-padded with pad_id, segment 1 on real tokens."""
    tokens = np.full((len(rows), length), pad_id, dtype=np.int32)
    segments = np.zeros((len(rows), length), dtype=np.int32)
    for i, row in enumerate(rows):
        tokens[i, :len(row)] = row
        segments[i, :len(row)] = 1
    return tokens, segments


@dataclass
class RunTokenizer:
    """The run's tokenizer (tokenizer.json of its mixture) with the special ids the tokenize stage encodes with."""

    tokenizer: Any
    bos_id: int
    eos_id: int
    pad_id: int

    @classmethod
    def load(cls, folder: str) -> "RunTokenizer":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        with open(os.path.join(folder, "tokenizer_config.json")) as f:
            config = json.load(f)
        ids = {}
        for role in ("bos", "eos", "pad"):
            token = config.get(f"{role}_token")
            token = token.get("content") if isinstance(token, dict) else token
            if token is None or tok.token_to_id(token) is None:
                raise ValueError(f"{folder}/tokenizer_config.json: {role}_token {token!r} is not in the vocabulary")
            ids[role] = tok.token_to_id(token)
        return cls(tok, ids["bos"], ids["eos"], ids["pad"])

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Ids of each text without specials (the caller places <s>, as the tokenize stage does)."""
        # encode_batch_fast skips the offsets, which scoring never reads (about twice as fast on short texts)
        return [e.ids for e in self.tokenizer.encode_batch_fast(texts, add_special_tokens=False)]


@dataclass
class PendingScores:
    """A dispatched batch of `token_scores`: the rows' lengths and the device arrays still computing."""

    lengths: np.ndarray
    device: Any

    def result(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if self.device is None:
            return [], []
        logprobs, greedy = (np.asarray(x) for x in self.device)  # waits for the computation
        return ([logprobs[i, :n - 1] for i, n in enumerate(self.lengths)],
                [greedy[i, :n - 1] for i, n in enumerate(self.lengths)])


@dataclass
class CheckpointModel:
    """A restored checkpoint: `.logits`, `.token_logprobs`, `.params`, `.tokenizer`, `.config`."""

    config: Any
    model: Any
    mesh: Any
    tokenizer: RunTokenizer
    step: int
    checkpoint_dir: str
    _compiled: dict = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, run_dir: str, step: int | None = None, batch_size: int | None = None,
             overrides: dict[str, Any] | None = None) -> "CheckpointModel":
        """The run's checkpoint `step` (default: the latest complete one), on this process's devices;
        `overrides`: MaxText keys that change the forward pass, not the parameters (e.g. capacity_factor)."""
        from maxtext.configs import pyconfig
        from maxtext.utils import maxtext_utils, model_creation_utils

        run_dir = os.path.abspath(run_dir) if "://" not in run_dir else run_dir.rstrip("/")
        config_path = os.path.join(run_dir, CONFIG_FILE)
        if not os.path.exists(config_path):
            raise FileNotFoundError(f"{config_path}: the run's MaxText config is missing (not a training run folder?)")
        steps = checkpoint_steps(os.path.join(run_dir, "checkpoints"))
        if not steps:
            raise FileNotFoundError(f"{run_dir}/checkpoints: no complete checkpoint")
        step = steps[-1] if step is None else step
        if step not in steps:
            raise ValueError(f"{run_dir}/checkpoints: no complete checkpoint {step}; complete: {steps}")
        keys = yaml.safe_load(open(config_path))
        checkpoint_dir = os.path.join(run_dir, "checkpoints", str(step), "items")
        overrides = {
            "load_parameters_path": checkpoint_dir, "enable_checkpointing": False, "enable_tensorboard": False,
            # only the forward pass is built: one device's batch is whatever the caller passes
            "per_device_batch_size": batch_size or keys.get("per_device_batch_size", 1),
            "skip_jax_distributed_system": True, "log_config": False, **(overrides or {}),
        }
        argv = ["checkpoint_model", config_path, *(f"{k}={v}" for k, v in overrides.items())]
        config = pyconfig.initialize(argv)
        mesh = maxtext_utils.get_mesh_from_config(config)
        model = model_creation_utils.from_pretrained(config, mesh)
        return cls(config, model, mesh, RunTokenizer.load(keys["tokenizer_path"]), step, checkpoint_dir)

    @property
    def context(self) -> int:
        return int(self.config.max_target_length)

    @property
    def vocab_size(self) -> int:
        return int(self.config.vocab_size)

    @property
    def params(self):
        """The restored parameter tree (nested dict of arrays), as MaxText's model holds it."""
        from flax import nnx

        return nnx.to_pure_dict(nnx.state(self.model, nnx.Param))

    def _function(self, name: str):
        """The jitted forward (`logits`) or target log-probabilities (`logprobs`), built once per kind."""
        if name in self._compiled:
            return self._compiled[name]
        import jax
        import jax.numpy as jnp
        from flax import nnx

        graphdef, state = nnx.split(self.model)

        def logits_of(state, tokens, segments, positions):
            model = nnx.merge(graphdef, state)
            return model(decoder_input_tokens=tokens, decoder_positions=positions,
                         decoder_segment_ids=segments, enable_dropout=False).astype(jnp.float32)

        def logprobs_of(state, tokens, segments, positions):
            # log p(tokens[:, t+1] | tokens[:, :t+1]) and whether it is the argmax; the vocab-sized
            # array never leaves the device
            logp = jax.nn.log_softmax(logits_of(state, tokens, segments, positions)[:, :-1], axis=-1)
            targets = tokens[:, 1:, None]
            return (jnp.take_along_axis(logp, targets, axis=-1)[..., 0],
                    jnp.argmax(logp, axis=-1) == targets[..., 0])

        fn = jax.jit({"logits": logits_of, "logprobs": logprobs_of}[name])
        self._compiled[name] = lambda *arrays: fn(state, *arrays)
        return self._compiled[name]

    def _launch(self, name: str, tokens: np.ndarray, segments: np.ndarray, positions: np.ndarray | None = None):
        """Dispatch the jitted program and return its device arrays without waiting for them (JAX runs
        asynchronously), so a caller can prepare the next batch while this one computes."""
        import jax
        from flax.linen import partitioning

        if positions is None:
            positions = np.broadcast_to(np.arange(tokens.shape[1], dtype=np.int32), tokens.shape)
        with jax.set_mesh(self.mesh), partitioning.axis_rules(self.config.logical_axis_rules):
            return self._function(name)(tokens, segments, np.asarray(positions, dtype=np.int32))

    def _run(self, name: str, tokens: np.ndarray, segments: np.ndarray, positions: np.ndarray | None = None):
        out = self._launch(name, tokens, segments, positions)
        return tuple(np.asarray(x) for x in out) if isinstance(out, tuple) else np.asarray(out)

    def logits(self, tokens: np.ndarray, segments: np.ndarray | None = None, positions: np.ndarray | None = None
               ) -> np.ndarray:
        """float32 (batch, seq, vocab) logits of int32 (batch, seq) tokens.

        `segments`: MaxText's segment ids (0 = padding; packed documents attend only within their id),
        default all 1; `positions`: each token's position in its document, default 0..seq-1."""
        tokens = np.asarray(tokens, dtype=np.int32)
        if tokens.ndim != 2:
            raise ValueError(f"tokens must be (batch, seq), got shape {tokens.shape}")
        if tokens.shape[1] > self.context:
            raise ValueError(f"{tokens.shape[1]} tokens exceed the model's context of {self.context}")
        segments = np.ones_like(tokens) if segments is None else np.asarray(segments, dtype=np.int32)
        return self._run("logits", tokens, segments, positions)

    def dispatch_scores(self, rows: list[list[int]] | list[np.ndarray], batch_rows: int | None = None) -> "PendingScores":
        """Start `token_scores` of the rows and return at once; `.result()` waits for it.

        The rows are right-padded into one batch of bucketed length; `batch_rows` pads the batch itself
        to that many rows, so a caller's last, smaller batch reuses the compiled program."""
        lengths = np.array([len(r) for r in rows])
        if not len(rows):
            return PendingScores(lengths, None)
        if lengths.min() < 2:
            raise ValueError("every row needs at least two tokens (a context token and one to score)")
        filler = [[self.tokenizer.bos_id] * 2] * max(0, (batch_rows or 0) - len(rows))
        length = bucket_length(int(lengths.max()), self.context)
        tokens, segments = pad_rows([*rows, *filler], length, self.tokenizer.pad_id)
        return PendingScores(lengths, self._launch("logprobs", tokens, segments))

    def token_scores(self, rows: list[list[int]] | list[np.ndarray], batch_rows: int | None = None
                     ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per row, (float32 log p(row[t+1] | row[:t+1]), bool: row[t+1] is the argmax) for t = 0..len-2."""
        return self.dispatch_scores(rows, batch_rows).result()

    def token_logprobs(self, rows: list[list[int]] | list[np.ndarray]) -> list[np.ndarray]:
        """Per row, float32 log p(row[t+1] | row[:t+1]) for t = 0..len-2, rows padded into one bucketed batch."""
        return self.token_scores(rows)[0]
