"""llama2: MaxText's default dense decoder block, the architecture of every recipe that names none."""

from __future__ import annotations

from typing import Literal

from marin_assets.train.architectures.base import DecoderArchitecture, register


@register("llama2")
class Llama2(DecoderArchitecture):
    """Pre-norm GQA attention + SwiGLU MLP; MaxText `decoder_block: llama2`."""

    kind: Literal["llama2"] = "llama2"
