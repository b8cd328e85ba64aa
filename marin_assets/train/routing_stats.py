"""Where an MoE run's tokens go: per layer, each expert's share of the routed tokens and the dropped fraction.

Runs in the training process after training, on the final checkpoint and the run's validation batches.
The router itself is MaxText's: the forward pass is captured with `flax.nnx.capture`, which records the
output of every `GateLogit` call (stacked over scanned layers), and the routing decision is the MoE
layer's own `RoutedMoE.get_topk`; with a capacity factor, kept tokens are those in the dispatch mask of
its own `generate_masks`, so the numbers are what training routed, not a re-implementation.
`summarize` and `collapsed_layers` are pure and tested without MaxText.
"""

from __future__ import annotations

DEFAULT_BATCHES = 8  # validation batches analysed (the tiny runs' split is a handful)


def summarize(counts: list[list[float]], kept: list[float] | None, routed: float) -> dict:
    """counts[layer][expert] = token-assignments, kept[layer] = assignments within capacity, routed = tokens x top-k."""
    layers = []
    for layer, row in enumerate(counts):
        total = sum(row)
        layers.append({
            "layer": layer,
            "shares": [c / total if total else 0.0 for c in row],
            "dropped_fraction": (1.0 - kept[layer] / routed) if kept is not None and routed else 0.0,
        })
    return {"layers": layers, "routed_assignments": routed,
            "max_share": max((max(l["shares"]) for l in layers), default=0.0)}


def collapsed_layers(stats: dict, max_share: float) -> list[str]:
    """'layer L: expert E takes S' for every layer where one expert takes more than max_share of the tokens."""
    out = []
    for layer in stats["layers"]:
        top = max(range(len(layer["shares"])), key=layer["shares"].__getitem__)
        if layer["shares"][top] > max_share:
            out.append(f"layer {layer['layer']}: expert {top} takes {layer['shares'][top]:.1%}")
    return out


def measure(config_path: str, steps: int, max_batches: int = DEFAULT_BATCHES) -> dict:
    """Routing statistics of the run's last checkpoint on its validation batches (MaxText's router)."""
    import jax
    import jax.numpy as jnp
    from flax import nnx
    from flax.core.spmd import logical_axis_rules
    from maxtext.layers import moe
    from maxtext.trainers.pre_train import train
    from maxtext.utils import sharding, train_utils

    # steps one past the last checkpoint only so MaxText accepts restoring a finished run (as domain_eval)
    config, recorder = train.initialize(["train", config_path, f"steps={steps + 1}", "eval_steps=-1"])
    setup = train_utils.setup_train_loop(config, recorder)
    mesh, eval_iterator, state = setup[4], setup[9], setup[10]
    model = state.model
    gate = next(m for _, m in nnx.iter_graph(model) if isinstance(m, moe.GateLogit))
    router = next(m for _, m in nnx.iter_graph(model) if isinstance(m, moe.RoutedMoE))
    forward = nnx.capture(lambda _gate, x: model(x["inputs"], x["inputs_position"],
                                                 decoder_segment_ids=x["inputs_segmentation"], enable_dropout=False),
                          nnx.Intermediate, method_outputs=nnx.Intermediate)
    rules = config.logical_axis_rules_for_eval
    counts = kept = None
    routed = 0.0
    for n, batch in enumerate(eval_iterator):
        if n == max_batches:
            break
        batch = jax.device_put(batch, sharding.get_input_data_sharding(config, mesh, rules=rules))
        with jax.set_mesh(mesh), logical_axis_rules(rules):
            _, captured = forward(gate, batch)
            (calls,) = [v.get_value() for path, v in captured.flat_state() if path[-1] == "__call__"]
            logits = calls[0][0]  # the GateLogit call's (logits, pre-bias logits): [layers, batch, seq, experts]
            logits = logits if logits.ndim == 4 else logits[None]
            real = (batch["inputs_segmentation"] != 0)[..., None]  # padding is routed too; not counted
            layer_counts, layer_kept = [], []
            for layer_logits in logits:
                weights, experts = router.get_topk(layer_logits, None)
                one_hot = jax.nn.one_hot(experts, config.num_experts) * real[..., None]
                layer_counts.append(jnp.sum(one_hot, axis=(0, 1, 2)))
                if config.capacity_factor > 0:
                    dispatch, _ = router.generate_masks(experts, router.reshape_and_update_weights(weights, experts))
                    per_token = jnp.sum(dispatch.reshape(*experts.shape[:2], -1), axis=-1)
                    layer_kept.append(jnp.sum(per_token * real[..., 0]))
        step_counts = [[float(c) for c in row] for row in layer_counts]
        counts = step_counts if counts is None else [[a + b for a, b in zip(r, s)] for r, s in zip(counts, step_counts)]
        if layer_kept:
            step_kept = [float(k) for k in layer_kept]
            kept = step_kept if kept is None else [a + b for a, b in zip(kept, step_kept)]
        routed += float(jnp.sum(real)) * config.num_experts_per_tok
    stats = summarize(counts or [], kept, routed)
    stats["capacity_factor"] = float(config.capacity_factor)
    return stats
