"""What `fit.metric` may name: the run's final eval loss, or a metric of result.json's `metrics` (the
mixture's loss and bpb, or a domain's: a source of the mixture or a registered eval set).

Its own small module: the recipe (suite.py, part of the runs' code version) checks the form with it,
and the fits (observations) read the metric with it, so editing the fits never retrains a run.
"""

from __future__ import annotations

import re

DEFAULT_METRIC = "final_eval_loss"
PER_DOMAIN = ("loss", "bpb")  # result.json metrics: loss, bpb, loss/<domain>, bpb/<domain>
METRIC_FORMS = "final_eval_loss, loss, bpb, loss:<domain> or bpb:<domain> (a source of the mixture or an eval set)"
_DOMAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


class UnknownMetricError(ValueError):
    pass


def metric_key(metric: str) -> str:
    """fit.metric as a key of result.json: "bpb:wiki" (or "bpb/wiki") is "bpb/wiki"; a bad form is an error."""
    if metric == DEFAULT_METRIC or metric in PER_DOMAIN:
        return metric
    kind, sep, domain = metric.replace(":", "/", 1).partition("/")
    if kind in PER_DOMAIN and sep and _DOMAIN.fullmatch(domain):
        return f"{kind}/{domain}"
    raise UnknownMetricError(f"fit.metric {metric!r} is not a metric; use {METRIC_FORMS}")
