"""The BLiMP task's Python document functions give what the harness's own Jinja template renders, on the
shipped sample's documents as the harness loads them (the template is the independent reference)."""

import ast
import os

from lm_eval.utils import apply_template

from marin_assets.evaluation import blimp_docs
from marin_assets.evaluation.harness_run import write_task_yamls
from marin_assets.evaluation.task_sets import load_task_sets, verified_files

TEMPLATE = {"doc_to_choice": "{{[sentence_good, sentence_bad]}}",  # lm_eval/tasks/blimp/_template_yaml
            "doc_to_decontamination_query": "{{sentence_good}} {{sentence_bad}}"}


def test_blimp_document_functions_equal_the_harness_template(tmp_path, monkeypatch):
    from lm_eval.tasks import TaskManager, get_task_dict

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    spec = load_task_sets().get("blimp_sample")
    tasks = write_task_yamls(spec, verified_files(spec), str(tmp_path))
    task = get_task_dict(tasks[:1], TaskManager(include_path=str(tmp_path), include_defaults=False))[tasks[0]]
    docs = list(task.test_docs())
    assert len(docs) == 100
    for doc in docs:
        assert task.doc_to_choice(doc) == ast.literal_eval(apply_template(TEMPLATE["doc_to_choice"], doc))
        assert task.doc_to_text(doc) == "" and task.doc_to_target(doc) == 0
        assert blimp_docs.decontamination_query(doc) == apply_template(TEMPLATE["doc_to_decontamination_query"], doc)
    # the failing case: a document whose sentences are swapped gets the swapped choices
    swapped = {**docs[0], "sentence_good": docs[0]["sentence_bad"], "sentence_bad": docs[0]["sentence_good"]}
    assert task.doc_to_choice(swapped) != task.doc_to_choice(docs[0])
    assert os.path.basename(spec.task_yaml) == "blimp_pairs.yaml"
