import pytest

from marin_assets.core.recipes import RecipeError, load_recipe
from marin_assets.scaling.suite import (
    FLOPS_PER_PARAM_TOKEN,
    ScalingRecipe,
    budget_label,
    heldout_run,
    load_scaling_recipe,
    compute_params,
    suite_runs,
    target_budgets,
    training_spec,
)
from marin_assets.train.preflight import count_params, flops_per_device_step


@pytest.mark.parametrize("path", ["scaling/cpu_suite.yaml", "scaling/tpu_example.yaml", "scaling/cpu_moe_suite.yaml"])
def test_shipped_recipes_plan_isoflop_grids(path):
    recipe = load_scaling_recipe(path)
    runs = suite_runs(recipe)
    keys = [r.key for r in runs]
    assert len(keys) == len(set(keys)) == sum(len(b.sizes) for b in recipe.budgets) * len(recipe.seeds)
    for run in runs:
        assert run.D == run.steps * recipe.global_batch_size * recipe.seq_len
        assert run.C == FLOPS_PER_PARAM_TOKEN * run.N * run.D
        assert run.C == pytest.approx(run.budget, rel=0.05)  # whole steps only move C a little
        assert run.key == f"C{budget_label(run.budget)}__{run.size}"
    held = heldout_run(recipe)
    assert held.budget > max(b.flops for b in recipe.budgets)
    assert target_budgets(recipe) == [max(b.flops for b in recipe.budgets) * m for m in (10, 100, 1000)]


def test_cpu_suite_fits_the_sample_mixture():
    recipe = load_scaling_recipe("scaling/cpu_suite.yaml")
    assert recipe.mixture == "sample"
    from marin_assets.tokenize.tokenize_recipe import load_mixture_recipe

    train_tokens = load_mixture_recipe("sample").train_tokens
    assert max(r.D for r in suite_runs(recipe) + [heldout_run(recipe)]) < 0.9 * train_tokens  # never runs out


def test_n_is_the_training_stages_count_without_the_input_embedding():
    recipe = load_scaling_recipe("scaling/cpu_suite.yaml")
    arch = recipe.sizes["d64l2"]
    assert compute_params(arch, 1024) == count_params(arch, 1024) - 1024 * 64
    assert compute_params(arch, 1024) == 131392 + 1024 * 64  # two layers + final norm, plus the unembedding


@pytest.mark.parametrize("path", ["scaling/cpu_suite.yaml", "scaling/tpu_example.yaml", "scaling/cpu_moe_suite.yaml"])
def test_6nd_tracks_maxtexts_own_flops_count(path):
    """The FLOPs model stays within 20% of MaxText's count (the gap is attention) for every planned run."""
    recipe = load_scaling_recipe(path)
    for run in suite_runs(recipe) + [heldout_run(recipe)]:
        step = flops_per_device_step(run.architecture, recipe.vocab_size, recipe.seq_len, recipe.global_batch_size)
        maxtext = step.total * run.steps
        assert run.C <= maxtext <= 1.2 * run.C, (run.key, maxtext / run.C)


def test_adding_a_budget_or_seed_keeps_existing_keys():
    recipe = load_scaling_recipe("scaling/cpu_suite.yaml")
    raw = recipe.model_dump()
    raw["budgets"].append({"flops": 2e12, "sizes": ["d64l2", "d96l2", "d64l1"]})
    raw["seeds"] = [0, 1]
    grown = ScalingRecipe.model_validate(raw)
    before = {r.key for r in suite_runs(recipe)}
    after = {r.key for r in suite_runs(grown)}
    assert before < after
    assert "C2e12__d96l2" in after and "C1e11__d16l1__s1" in after


def test_training_spec_carries_the_run(tmp_path):
    recipe = load_scaling_recipe("scaling/cpu_suite.yaml")
    run = suite_runs(recipe)[0]
    spec = training_spec(recipe, run)
    assert spec.run_name == f"cpu_suite-{run.key}"
    assert spec.steps == run.steps and spec.mixture == "sample"
    assert spec.model.architecture.emb_dim == run.architecture.emb_dim


def test_fit_metric_names_a_per_domain_metric_in_either_spelling():
    recipe = load_scaling_recipe("scaling/cpu_suite.yaml")
    for metric in ("bpb", "loss:debian_handbook", "bpb:handbook_passages", "bpb/python_docs"):
        ScalingRecipe.model_validate({**recipe.model_dump(mode="json"), "fit": {"metric": metric}})


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda r: r["budgets"].append({"flops": 1e11, "sizes": ["d16l1"]}), "budgets must be distinct"),
        (lambda r: r["budgets"][0]["sizes"].append("d999"), "not defined under 'sizes'"),
        (lambda r: r.update(heldout={"flops": 1e12, "size": "nope"}), "not defined under 'sizes'"),
        (lambda r: r.update(colour="blue"), "colour"),
        (lambda r: r["fit"].update(metric="perplexity"), "fit.metric 'perplexity' is not a metric; use final_eval_loss"),
        (lambda r: r["fit"].update(metric="bpb:"), "fit.metric 'bpb:' is not a metric"),
    ],
)
def test_bad_recipes_name_the_problem(tmp_path, edit, match):
    import yaml

    raw = load_scaling_recipe("scaling/cpu_suite.yaml").model_dump(mode="json")
    edit(raw)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(RecipeError, match=match) as err:
        load_recipe(path, ScalingRecipe)
    assert "bad.yaml" in str(err.value)


def test_moe_suite_uses_active_parameters_as_n_and_the_dense_suites_budgets():
    dense, moe = load_scaling_recipe("scaling/cpu_suite.yaml"), load_scaling_recipe("scaling/cpu_moe_suite.yaml")
    same = ("mixture", "budgets", "seq_len", "global_batch_size", "vocab_size", "optimizer", "seeds", "eval_steps",
            "heldout", "target_multipliers", "fit")
    assert {f: getattr(moe, f) for f in same} == {f: getattr(dense, f) for f in same}
    assert moe.compare_with == "scaling/cpu_suite.yaml" and set(moe.sizes) < set(dense.sizes)
    for size, arch in moe.sizes.items():
        assert arch.kind == "mixtral"
        n = compute_params(arch, 1024)
        assert n == arch.active_params(1024) - 1024 * arch.emb_dim < arch.count_params(1024) - 1024 * arch.emb_dim
        # top-2 of 4 half-width experts: the dense twin's active parameters plus the router (emb x 4 per layer)
        assert n == compute_params(dense.sizes[size], 1024) + arch.num_layers * arch.emb_dim * 4
    run = suite_runs(moe)[0]
    spec = training_spec(moe, run)
    assert spec.model.architecture.kind == "mixtral" and spec.model.architecture.vocab_size == 1024


def test_the_moe_suites_fits_read_active_parameters_as_n():
    """What a trained MoE run commits (run_result) is what the fits read (collect_observations): N is active."""
    from marin_assets.scaling.observations import collect_observations
    from marin_assets.scaling.run_results import run_result

    moe = load_scaling_recipe("scaling/cpu_moe_suite.yaml")
    runs = suite_runs(moe)
    results = []
    for run in runs:
        arch = moe.sizes[run.size]
        total = arch.count_params(moe.vocab_size)
        results.append(run_result(run, 4.0, vocab_size=moe.vocab_size, num_params=total, flops_per_token=1.0))
    table = collect_observations(results).table.set_index("run")
    for run in runs:
        arch = moe.sizes[run.size]
        active = arch.active_params(moe.vocab_size) - moe.vocab_size * arch.emb_dim
        assert table.loc[run.key, "N"] == active < arch.count_params(moe.vocab_size) - moe.vocab_size * arch.emb_dim
        assert table.loc[run.key, "C"] == pytest.approx(FLOPS_PER_PARAM_TOKEN * active * table.loc[run.key, "D"])
