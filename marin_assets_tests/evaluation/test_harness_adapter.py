"""The harness adapter over a real trained checkpoint: the harness's per-item log-likelihoods equal the
forward pass called directly, the model tells grammatical toy sentences from reversed ones (an untrained
checkpoint does not), and the adapter is found through the harness's own registry."""

import numpy as np
import pytest

from marin_assets.evaluation.harness_model import MODEL_NAME, CheckpointLM
from marin_assets.evaluation.harness_run import run_harness, summarize
from marin_assets.train.checkpoint_model import CheckpointModel
from marin_assets_tests.evaluation.toy_task_set import toy_task_set

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def final_model(trained_run):
    return CheckpointModel.load(str(trained_run))


def direct_logprob(model: CheckpointModel, text: str) -> float:
    ids = model.tokenizer.encode([text])[0]
    return float(model.token_logprobs([[model.tokenizer.bos_id, *ids]])[0].sum())


def test_the_adapter_is_registered_with_the_harness():
    from lm_eval.api.registry import get_model

    assert get_model(MODEL_NAME) is CheckpointLM


def test_harness_loglikelihoods_equal_the_direct_forward_pass_and_accuracy_separates_trained_from_untrained(
        final_model, trained_run, tmp_path):
    spec = toy_task_set(tmp_path / "pairs")
    results, samples = run_harness(CheckpointLM(final_model, batch_size=8), spec, str(tmp_path / "work"))
    for task, items in samples.items():
        for item in items[:5]:  # an independent reference: one unbatched row per sentence
            for (ll, _), (_, continuation) in zip(item["filtered_resps"], item["arguments"]):
                assert ll == pytest.approx(direct_logprob(final_model, continuation), abs=1e-3)
    summary = summarize(spec, results, samples)
    assert summary["overall"]["items"] == 48 and summary["overall"]["ties"] == 0
    assert summary["overall"]["acc"] >= 0.9 and summary["overall"]["centered_acc"] >= 0.8
    assert summary["overall"]["correct_prob_norm"] > 0.8 and 0 < summary["overall"]["bpb"] < 8

    # the failing case: the untrained (step 0) checkpoint cannot tell the orders apart
    untrained = CheckpointModel.load(str(trained_run), step=0)
    results0, samples0 = run_harness(CheckpointLM(untrained, batch_size=8), spec, str(tmp_path / "work0"))
    assert summarize(spec, results0, samples0)["overall"]["acc"] < 0.8


def test_rolling_loglikelihood_and_generation(final_model):
    from lm_eval.api.instance import Instance

    lm = CheckpointLM(final_model, batch_size=4)
    short = "the s1 v7 the o35 ."
    long = " and ".join([short] * 40)  # 240 words: two windows of the 128-token context
    request = lambda text: Instance("loglikelihood_rolling", {}, (text,), 0)
    got = lm.loglikelihood_rolling([request(short), request(long)])
    assert got[0] == pytest.approx(direct_logprob(final_model, short), abs=1e-3)
    ids = [final_model.tokenizer.bos_id, *final_model.tokenizer.encode([long])[0]]
    assert len(ids) > 128
    # every token after <s> scored exactly once, each with up to 127 tokens of context: windows [1, 128),
    # [128, 255), [255, 280) of the 280 ids
    expected, start = 0.0, 1
    while start < len(ids):
        end = min(start + 127, len(ids))
        row = ids[max(0, end - 128):end]
        expected += float(final_model.token_logprobs([row])[0][-(end - start):].sum())
        start = end
    assert got[1] == pytest.approx(expected, abs=1e-2)
    with pytest.raises(NotImplementedError, match="does not generate"):
        lm.generate_until([Instance("generate_until", {}, ("the", {}), 0)])
