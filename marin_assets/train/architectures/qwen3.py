"""qwen3: the dense Qwen3 block (llama2 shape + RMSNorm on queries and keys), what Marin's Delphi suite trains."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from marin_assets.train.architectures.base import DecoderArchitecture, register


@register("qwen3")
class Qwen3(DecoderArchitecture):
    """MaxText `decoder_block: qwen3` with `use_qk_norm: true` (QK-norm is what makes it qwen3)."""

    decoder_block: ClassVar[str] = "qwen3"
    kind: Literal["qwen3"] = "qwen3"

    def maxtext_keys(self, accelerator: str) -> dict[str, Any]:
        return {**super().maxtext_keys(accelerator), "use_qk_norm": True}

    def attention_params(self) -> int:
        # query_norm and key_norm: one RMSNorm scale of head_dim each, shared over heads
        return super().attention_params() + 2 * self.head_dim
