"""What `fit.metric` may name: the run's final eval loss, a metric of result.json's `metrics` (the
mixture's loss and bpb, or a domain's: a source of the mixture or a registered eval set), or a
downstream metric of the run's evaluation on a task set (`downstream:<task set>:<measure>`).

Its own small module: the recipe (suite.py, part of the runs' code version) checks the form with it,
and the fits (observations) read the metric with it, so editing the fits never retrains a run.
"""

from __future__ import annotations

import re

DEFAULT_METRIC = "final_eval_loss"
PER_DOMAIN = ("loss", "bpb")  # result.json metrics: loss, bpb, loss/<domain>, bpb/<domain>
DOWNSTREAM = "downstream"
# The fits model a quantity that falls with compute (a minimum per isoFLOP budget, E + A/N^a + B/D^b), so
# a downstream measure is fitted in its falling form: measure -> (overall field of the evaluation, sign, offset).
DOWNSTREAM_MEASURES = {
    "error": ("acc", -1.0, 1.0),                     # 1 - acc
    "centered_error": ("centered_acc", -1.0, 1.0),   # 1 - centred accuracy
    "prob_error": ("correct_prob_norm", -1.0, 1.0),  # 1 - normalised probability of the correct answer
    "nll": ("correct_logprob", -1.0, 0.0),           # - log-probability of the correct answer
    "bpb": ("bpb", 1.0, 0.0),                        # bits per byte of the correct continuation
}
RISING = {field: measure for measure, (field, _, _) in DOWNSTREAM_MEASURES.items() if field != measure}
METRIC_FORMS = ("final_eval_loss, loss, bpb, loss:<domain> or bpb:<domain> (a source of the mixture or an eval set), "
                f"downstream:<task set>:<{'|'.join(DOWNSTREAM_MEASURES)}>")
_DOMAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


class UnknownMetricError(ValueError):
    pass


def downstream_selector(metric: str) -> tuple[str, str] | None:
    """(task set, measure) of a `downstream:<task set>:<measure>` fit.metric; None for any other form."""
    kind, sep, rest = metric.replace("/", ":").partition(":")
    if kind != DOWNSTREAM:
        return None
    task_set, sep, measure = rest.partition(":")
    if not (sep and _DOMAIN.fullmatch(task_set)):
        raise UnknownMetricError(f"fit.metric {metric!r}: a downstream metric is downstream:<task set>:<measure> "
                                 f"with measure one of {', '.join(DOWNSTREAM_MEASURES)}")
    if measure in RISING:
        raise UnknownMetricError(
            f"fit.metric {metric!r}: {measure} rises with compute, and the fits model a quantity that falls "
            f"(a minimum per budget); use downstream:{task_set}:{RISING[measure]} instead")
    if measure not in DOWNSTREAM_MEASURES:
        raise UnknownMetricError(f"fit.metric {metric!r}: unknown downstream measure {measure!r}; "
                                 f"use one of {', '.join(DOWNSTREAM_MEASURES)}")
    return task_set, measure


def downstream_value(overall: dict, measure: str) -> float | None:
    """The fitted value of `measure` from an evaluation's `overall` numbers (its result.json)."""
    field, sign, offset = DOWNSTREAM_MEASURES[measure]
    value = overall.get(field)
    return None if value is None else offset + sign * float(value)


def metric_key(metric: str) -> str:
    """fit.metric as a key of result.json: "bpb:wiki" (or "bpb/wiki") is "bpb/wiki", "downstream:blimp:error"
    is "downstream/blimp/error" (set from the run's evaluation by the reader); a bad form is an error."""
    if metric == DEFAULT_METRIC or metric in PER_DOMAIN:
        return metric
    selector = downstream_selector(metric)
    if selector is not None:
        return "/".join((DOWNSTREAM, *selector))
    kind, sep, domain = metric.replace(":", "/", 1).partition("/")
    if kind in PER_DOMAIN and sep and _DOMAIN.fullmatch(domain):
        return f"{kind}/{domain}"
    raise UnknownMetricError(f"fit.metric {metric!r} is not a metric; use {METRIC_FORMS}")
