"""CheckpointModel: MaxText's forward pass over a restored checkpoint, checked against the run's own eval loss."""

import math

import numpy as np
import pytest

from marin_assets.train.checkpoint_model import CheckpointModel, bucket_length, pad_rows
from marin_assets_tests.evaluation.trained_run import final_result


def eval_iterator_loss(model: CheckpointModel) -> tuple[float, float]:
    """(mean loss, tokens) of `model` over MaxText's own eval batches of the run (its packing, segments, positions)."""
    import jax
    from maxtext.input_pipeline.input_pipeline_interface import create_data_iterator

    _, batches = create_data_iterator(model.config, model.mesh)
    total = count = 0.0
    for batch in batches:
        batch = {k: np.asarray(v) for k, v in batch.items()}
        logits = model.logits(batch["inputs"], batch["inputs_segmentation"], batch["inputs_position"])
        logp = np.asarray(jax.nn.log_softmax(logits, axis=-1))
        target_logp = np.take_along_axis(logp, batch["targets"][..., None], axis=-1)[..., 0]
        mask = batch["targets_segmentation"] != 0
        total -= float(target_logp[mask].sum())
        count += float(mask.sum())
    return total / count, count


def test_bucketed_padding_and_the_context_limit():
    assert [bucket_length(n, 128) for n in (1, 16, 17, 100, 128)] == [16, 16, 32, 128, 128]
    assert bucket_length(70, 100) == 100
    with pytest.raises(ValueError, match="129 tokens exceeds the model's context of 128"):
        bucket_length(129, 128)
    tokens, segments = pad_rows([np.array([5, 6, 7]), np.array([8])], 4, pad_id=0)
    assert tokens.tolist() == [[5, 6, 7, 0], [8, 0, 0, 0]] and segments.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0]]


@pytest.mark.slow
def test_forward_pass_reproduces_the_runs_final_eval_loss_and_is_padding_aware(trained_run):
    result = final_result(trained_run)
    model = CheckpointModel.load(str(trained_run))
    assert model.step == result["checkpoint_step"]
    loss, tokens = eval_iterator_loss(model)
    # ground truth: MaxText's eval_step on the same checkpoint and tokens, recorded by the training run
    assert tokens == result["eval_tokens"]
    assert loss == pytest.approx(result["final_eval_loss"], rel=1e-5)
    assert model.params["token_embedder"]["embedding"].shape == (model.vocab_size, 64)

    # padding-aware: a row's log-probs do not depend on its batch partners or the padded length
    rows = [[2, 40, 100, 44, 3], list(range(2, 60))]
    alone = model.token_logprobs([rows[0]])[0]
    batched = model.token_logprobs(rows)
    assert alone.shape == (4,) and np.allclose(alone, batched[0], atol=1e-5)
    logits = model.logits(np.array([rows[0]], dtype=np.int32))[0]
    direct = logits[:-1] - np.log(np.exp(logits[:-1]).sum(-1, keepdims=True))
    assert np.allclose(alone, direct[np.arange(4), rows[0][1:]], atol=1e-4)
    with pytest.raises(ValueError, match="exceeds the model's context of 128"):
        model.token_logprobs([list(range(2, 140))])

    # the failing case: an earlier checkpoint of the same run does not reproduce the final loss
    early_loss, _ = eval_iterator_loss(CheckpointModel.load(str(trained_run), step=20))
    assert math.isfinite(early_loss) and abs(early_loss - result["final_eval_loss"]) > 1e-2


def test_load_refuses_a_folder_without_config_or_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="maxtext.yml: the run's MaxText config is missing"):
        CheckpointModel.load(str(tmp_path))
    (tmp_path / "maxtext.yml").write_text("base_config: base.yml\n")
    with pytest.raises(FileNotFoundError, match="checkpoints: no complete checkpoint"):
        CheckpointModel.load(str(tmp_path))


@pytest.mark.slow
def test_load_refuses_a_missing_step(trained_run):
    with pytest.raises(ValueError, match=r"no complete checkpoint 7; complete: \[0, 20, 39\]"):
        CheckpointModel.load(str(trained_run), step=7)
