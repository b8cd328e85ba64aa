"""Python forms of the BLiMP task YAML's document functions (referenced with `!function` in blimp_pairs.yaml).

Why not Jinja: the harness compiles a Jinja template afresh on every call (lm_eval.utils.apply_template),
three to four times per document, which made building BLiMP's 134k requests cost more than scoring them.
These functions return exactly what the harness's own blimp template renders.
"""

from __future__ import annotations


def no_context(doc: dict) -> str:
    """BLiMP sentences are scored as whole documents: an empty context (the template's doc_to_text: "")."""
    return ""


def pair_choices(doc: dict) -> list[str]:
    """Choice 0 is the acceptable sentence, as `{{[sentence_good, sentence_bad]}}` renders it."""
    return [doc["sentence_good"], doc["sentence_bad"]]


def decontamination_query(doc: dict) -> str:
    """Both sentences, as `{{sentence_good}} {{sentence_bad}}` renders it."""
    return f"{doc['sentence_good']} {doc['sentence_bad']}"
