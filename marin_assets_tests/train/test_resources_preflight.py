"""ResourceConfig, the TPU catalog, run specs and the pure preflight rules (no MaxText needed)."""

import pytest
from pydantic import ValidationError

from marin_assets.core.recipes import RecipeError
from marin_assets.train.models import list_model_recipes, load_model_recipe
from marin_assets.train.preflight import PreflightError, count_params, extrapolate, preflight, require_fits
from marin_assets.train.hardware import MeshError, ResourceConfig
from marin_assets.train.runs import TrainingRunSpec, load_training_runs
from marin_assets.train.tpu_catalog import TPU_TYPES, tpu_spec


def test_catalog_shapes_are_consistent():
    for spec in TPU_TYPES.values():
        dims = [int(x) for x in spec.topology.split("x")]
        chips_in_topology = 1
        for d in dims:
            chips_in_topology *= d
        assert chips_in_topology == spec.chips, spec.name
        assert spec.chips_per_host * spec.hosts == spec.chips, spec.name
    assert tpu_spec("v4-32").chips == 16 and tpu_spec("v4-32").hosts == 4
    assert tpu_spec("v5litepod-256").hosts == 64 and tpu_spec("v5litepod-8").hosts == 1


def test_tpu_resource_fills_from_catalog_and_maps_to_maxtext_mesh():
    r = ResourceConfig(accelerator="tpu", tpu_type="v5litepod-16", num_slices=2,
                       parallelism={"ici": {"fsdp": -1, "tensor": 2}})
    assert (r.hosts_per_slice, r.chips_per_host, r.memory_per_chip_gib, r.topology) == (4, 4, 16, "4x4")
    assert r.num_devices() == 32 and r.launcher == "kubernetes"
    keys = r.maxtext_parallelism_keys()
    assert keys["ici_fsdp_parallelism"] == 8 and keys["ici_tensor_parallelism"] == 2
    assert keys["dcn_data_parallelism"] == 2 and keys["num_slices"] == 2
    assert r.maxtext_hardware_keys()["hardware"] == "tpu"


def test_resource_contradicting_catalog_or_unknown_type_is_refused():
    with pytest.raises(ValidationError, match="contradicts tpu_type v4-32"):
        ResourceConfig(accelerator="tpu", tpu_type="v4-32", hosts_per_slice=2)
    with pytest.raises(ValidationError, match="unknown tpu_type 'v4-33'"):
        ResourceConfig(accelerator="tpu", tpu_type="v4-33")
    with pytest.raises(ValidationError, match="tpu_type is required"):
        ResourceConfig(accelerator="tpu")


def test_mesh_that_does_not_divide_names_the_knob():
    r = ResourceConfig(accelerator="tpu", tpu_type="v4-32", parallelism={"ici": {"fsdp": -1, "tensor": 3}})
    with pytest.raises(MeshError, match=r"parallelism\.ici\.tensor"):
        r.resolved_mesh()
    fixed = ResourceConfig(accelerator="tpu", tpu_type="v4-32", parallelism={"ici": {"fsdp": 4, "tensor": 2}})
    with pytest.raises(MeshError, match="multiply to 8 but there are 16 devices"):
        fixed.resolved_mesh()


def test_cpu_resource_simulated_devices():
    r = ResourceConfig(chips_per_host=4, memory_gib=8, parallelism={"ici": {"fsdp": 2, "tensor": 2}})
    assert r.num_devices() == 4 and r.launcher == "local" and r.memory_per_chip_gib == 2
    assert r.process_env()["XLA_FLAGS"] == "--xla_force_host_platform_device_count=4"
    assert r.maxtext_hardware_keys()["skip_jax_distributed_system"] is True


def test_model_ladder_loads_and_param_counts_are_ordered():
    names = list_model_recipes()
    assert {"tiny-0.2m", "tiny-1m", "150m", "8b"} <= set(names)
    sizes = {n: count_params(load_model_recipe(n).architecture, 32000) for n in names}
    assert sizes["tiny-0.2m"] < sizes["tiny-1m"] < sizes["150m"] < sizes["1.4b"] < sizes["8b"]
    # Llama-3-8B: 8.03B parameters with its 128,256-token vocabulary
    assert 8.0e9 < count_params(load_model_recipe("8b").architecture, 128256) < 8.06e9
    # The documented tiny model: 262,464 parameters with a 1024 vocab (the MaxText spike's number).
    assert count_params(load_model_recipe("tiny-0.2m").architecture, 1024) == 262_464


def test_same_recipe_cpu_vs_tpu_changes_only_per_device_batch():
    model = load_model_recipe("150m")
    cpu = preflight(model, ResourceConfig(memory_gib=64), 32000, steps=10)
    tpu = preflight(model, ResourceConfig(accelerator="tpu", tpu_type="v5litepod-16"), 32000, steps=10)
    assert cpu.flops_per_step == pytest.approx(tpu.flops_per_step)
    assert cpu.per_device_batch_size == 256 and tpu.per_device_batch_size == 16
    assert tpu.fits


def test_preflight_refuses_what_does_not_fit_and_names_knobs():
    model = load_model_recipe("8b")
    report = preflight(model, ResourceConfig(accelerator="tpu", tpu_type="v5litepod-8"), 128256, steps=10)
    assert not report.fits and "pick a larger tpu_type" in report.problems[0]
    with pytest.raises(PreflightError, match="needs ~"):
        require_fits(report)
    tiny = load_model_recipe("tiny-0.2m")  # global batch 4 cannot split over 8 fsdp shards
    bad = preflight(tiny, ResourceConfig(accelerator="tpu", tpu_type="v5litepod-8"), 1024, steps=10)
    assert any("global_batch_size=4" in p for p in bad.problems)


def test_profile_extrapolation_drops_the_compile_step():
    est = extrapolate([12.0, 0.5, 0.4, 0.6], steps=1000, num_devices=16)
    assert est.median_step_s == 0.5 and est.estimated_wall_s == 500
    assert est.estimated_chip_hours == pytest.approx(500 * 16 / 3600)


def test_run_spec_eval_schedule_always_ends_with_final_eval():
    spec = TrainingRunSpec(run_name="r", model="tiny-0.2m", mixture="m", budget={"steps": 61}, eval={"interval": 25})
    sched = spec.eval_schedule()
    assert (spec.final_step - sched["eval_start_step"]) % sched["eval_interval"] == 0
    only_final = TrainingRunSpec(run_name="r", model="tiny-0.2m", mixture="m").eval_schedule()
    assert only_final["eval_start_step"] == 20 and only_final["eval_steps"] == -1
    tokens = TrainingRunSpec(run_name="r", model="tiny-0.2m", mixture="m", budget={"tokens": 5000})
    assert tokens.steps == 10  # ceil(5000 / (4 x 128))


def test_shipped_runs_file_is_valid_and_bad_run_names_the_field(tmp_path, monkeypatch):
    assert "tiny-sample" in load_training_runs().runs
    (tmp_path / "training").mkdir()
    (tmp_path / "models").symlink_to(load_model_recipe.__globals__["recipes_dir"]() / "models")
    (tmp_path / "training" / "runs.yaml").write_text("runs:\n  bad:\n    model: tiny-0.2m\n    mixture: m\n    eval: {steps: 0}\n")
    monkeypatch.setenv("MARIN_RECIPES_DIR", str(tmp_path))
    with pytest.raises(RecipeError, match=r"runs\.bad\.eval\.steps"):
        load_training_runs()
