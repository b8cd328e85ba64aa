"""Registered decoder architectures, keyed by the `kind` a model recipe names (default llama2).

Adding one: a module here whose class subclasses base.DecoderArchitecture and is decorated with
`@register("<kind>")`; ARCHITECTURES imports every module of this package (core.registries), and the
import graph follows that discovery, so the training assets' code version covers the new module.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Discriminator, SerializeAsAny, Tag

from marin_assets.train.architectures.base import (ARCHITECTURES, DEFAULT_KIND, DecoderArchitecture,
                                                   StepFlops)


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return value.get("kind", DEFAULT_KIND)
    return getattr(value, "kind", DEFAULT_KIND)


# The recipe field type: the registered class picked by `kind`; errors name architecture.<kind>.<field>.
Architecture = SerializeAsAny[Annotated[
    Union[tuple(Annotated[cls, Tag(kind)] for kind, cls in sorted(ARCHITECTURES.items()))],
    Discriminator(_kind_of),
]]

__all__ = ["ARCHITECTURES", "Architecture", "DecoderArchitecture", "StepFlops"]
