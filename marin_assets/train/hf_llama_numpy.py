"""An implementation of Hugging Face's Llama forward pass in numpy, independent of MaxText and of JAX.

It reads an exported folder as `transformers.LlamaForCausalLM` would (config.json + safetensors
through `safetensors.numpy`) and computes the logits with HF's semantics: RMSNorm (`rms_norm_eps`),
rotate-half RoPE with `rope_theta`, grouped-query attention scaled by 1/sqrt(head_dim) with a
causal mask, SiLU-gated MLP. torch (and so `transformers`' models) is not installable here, which
is why this exists; it is the reference the export's logits check compares MaxText with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class HfLlama:
    config: dict
    weights: dict[str, np.ndarray]
    MODEL_TYPE = "llama"  # config.json's model_type this class implements

    @classmethod
    def load(cls, folder: str | Path) -> "HfLlama":
        from safetensors.numpy import load_file

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text())
        if config.get("model_type") != cls.MODEL_TYPE:
            raise ValueError(f"{folder}/config.json: model_type {config.get('model_type')!r} is not {cls.MODEL_TYPE!r}")
        weights: dict[str, np.ndarray] = {}
        for shard in sorted(folder.glob("*.safetensors")):
            weights.update({k: v.astype(np.float64) for k, v in load_file(str(shard)).items()})
        return cls(config, weights)

    def _rms(self, x: np.ndarray, name: str) -> np.ndarray:
        eps = self.config["rms_norm_eps"]
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * self.weights[name]

    def _rope(self, x: np.ndarray) -> np.ndarray:
        """x: (heads, seq, head_dim); HF's rotate_half layout (first half / second half)."""
        dim, seq = x.shape[-1], x.shape[-2]
        inv_freq = 1.0 / (self.config["rope_theta"] ** (np.arange(0, dim, 2) / dim))
        angles = np.outer(np.arange(seq), inv_freq)
        cos, sin = np.cos(np.concatenate([angles, angles], -1)), np.sin(np.concatenate([angles, angles], -1))
        x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
        return x * cos + np.concatenate([-x2, x1], -1) * sin

    @staticmethod
    def _swiglu(h: np.ndarray, gate_w: np.ndarray, up_w: np.ndarray, down_w: np.ndarray) -> np.ndarray:
        """down(silu(h @ gate.T) * (h @ up.T)): HF's LlamaMLP (and each Mixtral expert: w1, w3, w2)."""
        gate, up = h @ gate_w.T, h @ up_w.T
        return (gate / (1 + np.exp(-gate)) * up) @ down_w.T

    def _feed_forward(self, p: str, h: np.ndarray) -> np.ndarray:
        """One layer's MLP on the normed hidden states (seq, hidden)."""
        w = self.weights
        return self._swiglu(h, w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"], w[p + "mlp.down_proj.weight"])

    def logits(self, tokens: list[int] | np.ndarray) -> np.ndarray:
        """(seq, vocab) float64 logits of one sequence of token ids."""
        c, w = self.config, self.weights
        heads, kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        head_dim = c.get("head_dim") or c["hidden_size"] // heads
        x = w["model.embed_tokens.weight"][np.asarray(tokens)]
        seq = x.shape[0]
        mask = np.triu(np.full((seq, seq), -np.inf), k=1)
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self._rms(x, p + "input_layernorm.weight")
            q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(seq, heads, head_dim).transpose(1, 0, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(seq, kv_heads, head_dim).transpose(1, 0, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(seq, kv_heads, head_dim).transpose(1, 0, 2)
            q, k = self._rope(q), self._rope(k)
            k, v = np.repeat(k, heads // kv_heads, axis=0), np.repeat(v, heads // kv_heads, axis=0)
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(head_dim) + mask
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attn = (scores / scores.sum(-1, keepdims=True)) @ v
            x = x + attn.transpose(1, 0, 2).reshape(seq, heads * head_dim) @ w[p + "self_attn.o_proj.weight"].T
            x = x + self._feed_forward(p, self._rms(x, p + "post_attention_layernorm.weight"))
        x = self._rms(x, "model.norm.weight")
        head = w["model.embed_tokens.weight"] if c.get("tie_word_embeddings") else w["lm_head.weight"]
        return x @ head.T
