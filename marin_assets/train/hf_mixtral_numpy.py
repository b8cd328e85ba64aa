"""Hugging Face's Mixtral forward pass in numpy (independent of MaxText): HfLlama's attention + top-k routed experts.

Routing as `transformers.MixtralSparseMoeBlock` computes it at inference: router logits
`h @ block_sparse_moe.gate.weight.T`, softmax over all `num_local_experts`, the
`num_experts_per_tok` largest probabilities renormalised to sum to 1, and each chosen expert's
SwiGLU (`silu(w1 h) * (w3 h)` then `w2`) weighted by them. HF Mixtral never drops a token (no
capacity), so MaxText's side of the comparison runs dropless too (see hf_export.MixtralExport).
"""

from __future__ import annotations

import numpy as np

from marin_assets.train.hf_llama_numpy import HfLlama


class HfMixtral(HfLlama):
    MODEL_TYPE = "mixtral"

    def route(self, p: str, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(seq, k) chosen expert ids and their renormalised weights for one layer."""
        logits = h @ self.weights[p + "block_sparse_moe.gate.weight"].T          # (seq, experts)
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        k = int(self.config["num_experts_per_tok"])
        chosen = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
        weights = np.take_along_axis(probs, chosen, axis=-1)
        return chosen, weights / weights.sum(-1, keepdims=True)

    def _feed_forward(self, p: str, h: np.ndarray) -> np.ndarray:
        chosen, weights = self.route(p, h)
        out = np.zeros_like(h)
        for expert in range(int(self.config["num_local_experts"])):
            rows, slot = np.nonzero(chosen == expert)
            if rows.size == 0:
                continue
            e = f"{p}block_sparse_moe.experts.{expert}."
            y = self._swiglu(h[rows], self.weights[e + "w1.weight"], self.weights[e + "w3.weight"],
                             self.weights[e + "w2.weight"])
            out[rows] += weights[rows, slot][:, None] * y
        return out
