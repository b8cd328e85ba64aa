"""Downstream evaluation of trained runs through lm-evaluation-harness (task sets, adapter, summaries)."""
