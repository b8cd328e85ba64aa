"""Registered scaling-law forms, keyed by the name a recipe uses (`fit.law`).

Adding a form: one new module in this package implementing base.LawForm, its class decorated with
`@register` (base.py); LAWS finds it (core.registries discovers the package).
"""

from __future__ import annotations

import sys
from types import ModuleType

from marin_assets.scaling.laws.base import LAWS, FitError, Law, LawForm


def get_form(name: str) -> LawForm:
    if name not in LAWS:
        raise FitError(f"unknown law form {name!r}; registered: {LAWS.names()}")
    return LAWS[name]


def law_from_params(params: dict, context: dict | None = None) -> Law:
    """A fitted law back from its stored parameters (`law` names the form; old reports are Chinchilla)."""
    return get_form(params.get("law", "chinchilla")).from_params(params, context)


def source_modules() -> list[ModuleType]:
    """The modules that implement the registered forms (part of the fit assets' code version)."""
    from marin_assets.scaling.laws import base

    return [sys.modules[__name__], base, *LAWS.modules()]


__all__ = ["LAWS", "FitError", "Law", "LawForm", "get_form", "law_from_params"]
