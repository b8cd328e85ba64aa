"""The value reported with a rejection is the quantity the rule compared with its threshold."""

from __future__ import annotations

import inspect
import re

from marin_assets.data.clean.filters import c4, fineweb, gopher_quality, gopher_repetition
from marin_assets.data.clean.filters.pipeline import FilterSettings, run_filters
from marin_assets.data.clean.filters.rule_values import MEASURES, measured_value

MODULES = {"c4": c4, "fineweb": fineweb, "gopher_quality": gopher_quality, "gopher_repetition": gopher_repetition}
SENTENCES = [
    "The river runs past the old mill and into the valley below the town, where the road bends twice.",
    "Farmers bring their grain to be ground there before the winter comes and the paths freeze over.",
    "Children play with the dogs that live near the water in the summer, when the days are long.",
    "Every spring the snow melts and the current grows strong and cold, and the wheel turns faster.",
]


def test_every_measured_rule_is_a_rule_its_filter_returns():
    for key in MEASURES:
        name, rule = key.split(":", 1)
        source = inspect.getsource(MODULES[name])  # the filter module (C4's check delegates to filter_lines)
        assert f'"{rule}"' in source or f'"{re.sub(r"\d+", "{n}", rule)}"' in source, key


def test_rejections_carry_the_value_that_tripped_them():
    settings = FilterSettings()
    repeated = run_filters("spam eggs " * 60, settings)
    assert repeated.reason == "gopher_repetition:top_2_gram" and repeated.value > settings.gopher_repetition.top_n_grams[2]

    words = " ".join(f"{w}{i}" for i, w in enumerate(["harbour", "lantern", "meadow"] * 10))
    short = run_filters(words, settings)
    assert short.reason == "gopher_quality:gopher_short_doc" and short.value == 30 < settings.gopher_quality.min_doc_words

    few = run_filters("\n".join(SENTENCES[:4]), settings)
    assert few.reason == "c4:too_few_sentences" and few.value == 4 < settings.c4.min_num_sentences


def test_unknown_rule_has_no_value():
    assert measured_value("c4:lorem_ipsum", "lorem ipsum dolor", FilterSettings()) is None
