"""Per-domain evaluation of a trained run (Paloma-style): the final checkpoint's loss on each
source's part of the validation split, computed by MaxText's own eval_step.

Runs in the training process after training (JAX and the model code are loaded already). The
validation shards carry a `source` column (the mixture stage writes it); each source's rows are
written to <run_dir>/domain_eval/<source>/ and read by a MaxText eval iterator built from the run's
own config (`grain_eval_files` swapped), so packing, masking and the loss are exactly the final
eval's: on the whole split this reproduces MaxText's eval/avg_loss (checked by a test). The train
state is restored once from the last checkpoint (config `steps` is set one past it only so MaxText
accepts restoring a finished run; nothing is trained), and the eval step is compiled once. The
registered eval sets are evaluated the same way, from the token shards the launcher prepared in the
run folder (train.eval_set_texts).
"""

from __future__ import annotations

import posixpath

SOURCE_COLUMN = "source"


def split_by_source(validation_glob: str, out_dir: str) -> dict[str, str]:
    """{source: glob of its validation rows}; {} when the shards carry no source column."""
    import fsspec
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    fs, _ = fsspec.core.url_to_fs(validation_glob)
    tables = []
    for path in sorted(fs.glob(validation_glob)):
        with fs.open(path, "rb") as f:
            tables.append(pq.read_table(f))
    if not tables or SOURCE_COLUMN not in tables[0].column_names:
        return {}
    table = pa.concat_tables(tables)
    globs = {}
    for source in sorted(set(table.column(SOURCE_COLUMN).to_pylist())):
        rows = table.filter(pc.equal(table.column(SOURCE_COLUMN), source)).select(["tokens"])
        folder = posixpath.join(out_dir, source)
        fs.makedirs(folder, exist_ok=True)
        with fs.open(posixpath.join(folder, "shard-00000.parquet"), "wb") as f:
            pq.write_table(rows, f)
        globs[source] = posixpath.join(folder, "*.parquet")
    return globs


def evaluate(config_path: str, steps: int, globs: dict[str, str]) -> dict[str, dict[str, float]]:
    """{name: {loss, tokens}} of the run's last checkpoint on each eval glob (MaxText's eval_step)."""
    import jax
    from flax import nnx
    from flax.core.spmd import logical_axis_rules
    from maxtext.configs import pyconfig
    from maxtext.input_pipeline.input_pipeline_interface import create_data_iterator
    from maxtext.trainers.pre_train import train
    from maxtext.utils import sharding, train_utils

    if not globs:
        return {}
    names = sorted(globs)
    argv = lambda glob: ["train", config_path, f"steps={steps + 1}", f"grain_eval_files={glob}", "eval_steps=-1"]
    config, recorder = train.initialize(argv(globs[names[0]]))
    setup = train_utils.setup_train_loop(config, recorder)
    model, mesh, eval_iterator, state = setup[3], setup[4], setup[9], setup[10]
    shardings = setup[2]
    graph, state = nnx.split(state)
    params_shardings, shardings = sharding.maybe_update_params_sharding_with_opt(config, shardings)
    _, eval_step = train_utils.jit_train_and_eval_step(config, graph, mesh, state, shardings, train.train_step,
                                                       train.eval_step, eval_iterator, params_shardings)
    rules = config.logical_axis_rules_for_eval
    results = {}
    for name in names:
        if name != names[0]:
            eval_iterator = create_data_iterator(pyconfig.initialize(argv(globs[name])), mesh)[1]
        total_loss = total_weights = 0.0
        for batch in eval_iterator:
            batch = jax.device_put(batch, sharding.get_input_data_sharding(config, mesh, rules=rules))
            with jax.set_mesh(mesh), logical_axis_rules(rules):
                metrics = eval_step(state, batch)["scalar"]
            total_loss += float(metrics["evaluation/total_loss"])
            total_weights += float(metrics["evaluation/total_weights"])
        results[name] = {"loss": total_loss / total_weights if total_weights else float("nan"),
                         "tokens": total_weights}
    del model
    return results


def domain_eval(config_path: str, keys: dict, run_dir: str, eval_set_globs: dict[str, str] | None = None
                ) -> dict[str, dict[str, float]]:
    """{domain: {loss, tokens}}: each source of the validation split, then each prepared eval set."""
    globs = split_by_source(keys["grain_eval_files"], posixpath.join(run_dir, "domain_eval"))
    globs.update({name: glob for name, glob in (eval_set_globs or {}).items() if name not in globs})
    return evaluate(config_path, int(keys["steps"]), globs)
