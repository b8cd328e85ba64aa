"""Registered scaling-law forms, keyed by the name a recipe uses (`fit.law`).

Adding a form: one new module implementing base.LawForm, plus its line in LAWS below.
"""

from __future__ import annotations

import sys
from types import ModuleType

from marin_assets.scaling.laws.base import FitError, Law, LawForm
from marin_assets.scaling.laws.chinchilla import ChinchillaForm
from marin_assets.scaling.laws.data_constrained import DataConstrainedForm

LAWS: dict[str, LawForm] = {form.name: form for form in (ChinchillaForm(), DataConstrainedForm())}


def get_form(name: str) -> LawForm:
    if name not in LAWS:
        raise FitError(f"unknown law form {name!r}; registered: {sorted(LAWS)}")
    return LAWS[name]


def law_from_params(params: dict, context: dict | None = None) -> Law:
    """A fitted law back from its stored parameters (`law` names the form; old reports are Chinchilla)."""
    return get_form(params.get("law", "chinchilla")).from_params(params, context)


def source_modules() -> list[ModuleType]:
    """The modules that implement the registered forms (part of the fit assets' code version)."""
    from marin_assets.scaling.laws import base

    return [sys.modules[__name__], base, *(sys.modules[type(form).__module__] for form in LAWS.values())]


__all__ = ["LAWS", "FitError", "Law", "LawForm", "get_form", "law_from_params"]
