"""Import a Hugging Face folder (config.json + safetensors) as a MaxText checkpoint a run can start from.

The inverse of train/hf_export.py through the same MaxText tables (`param_mapping` names; hooks
with `saving_to_hf=False`: transpose back, un-scale the query by sqrt(head_dim)), then the layers are
stacked as a scanned MaxText model holds them (layers on `param_scan_axis` 1, experts on axis 0)
and written with MaxText's own `save_weights_to_checkpoint` (orbax, params only, step 0).
Reads safetensors through `safetensors.numpy`: no torch. `hf_config_problems` is the check that
the folder fits the run's model before anything converts or launches.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np

from marin_assets.train.hf_export import MixtralExport, exporter_for

MODEL_TYPES = {"llama": "llama2", "mixtral": "mixtral"}  # HF model_type -> MaxText decoder_block
# transformers' LlamaConfig / MixtralConfig defaults, for a config.json that leaves them out
HF_DEFAULTS = {"llama": {"rms_norm_eps": 1e-6, "rope_theta": 10_000.0},
               "mixtral": {"rms_norm_eps": 1e-5, "rope_theta": 1e6}}
SCAN_AXIS = 1  # MaxText's param_scan_axis (base.yml; the platform never changes it)
# HF config.json field -> the model recipe's field it must equal
RECIPE_FIELDS = {
    "model_type": "architecture.kind", "hidden_size": "architecture.emb_dim",
    "intermediate_size": "architecture.mlp_dim", "num_hidden_layers": "architecture.num_layers",
    "num_attention_heads": "architecture.num_query_heads", "num_key_value_heads": "architecture.num_kv_heads",
    "head_dim": "architecture.head_dim", "vocab_size": "architecture.vocab_size (or the tokenizer's, rounded up)",
    "num_local_experts": "architecture.num_experts", "num_experts_per_tok": "architecture.num_experts_per_tok",
    "rms_norm_eps": "MaxText normalization_layer_epsilon", "rope_theta": "MaxText rope_max_timescale",
    "tie_word_embeddings": "MaxText logits_via_embedding",
}


def keys_of_hf_config(config: dict, where: str = "config.json") -> dict[str, Any]:
    """The MaxText model keys an HF config describes (what the exporter would have been given)."""
    model_type = config.get("model_type")
    if model_type not in MODEL_TYPES:
        raise ValueError(f"{where}: model_type {model_type!r} cannot be imported; known: {sorted(MODEL_TYPES)}")
    try:
        keys = {"decoder_block": MODEL_TYPES[model_type], "base_emb_dim": config["hidden_size"],
                "base_num_decoder_layers": config["num_hidden_layers"],
                "base_num_query_heads": config["num_attention_heads"],
                "base_num_kv_heads": config.get("num_key_value_heads", config["num_attention_heads"]),
                "head_dim": config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"],
                "base_mlp_dim": config["intermediate_size"], "vocab_size": config["vocab_size"],
                "max_target_length": config.get("max_position_embeddings", 0),
                "normalization_layer_epsilon": config.get("rms_norm_eps", HF_DEFAULTS[model_type]["rms_norm_eps"]),
                "rope_max_timescale": config.get("rope_theta", HF_DEFAULTS[model_type]["rope_theta"]),
                "logits_via_embedding": bool(config.get("tie_word_embeddings", False))}
        if model_type == "mixtral":
            keys |= {"num_experts": config["num_local_experts"], "num_experts_per_tok": config["num_experts_per_tok"],
                     "base_moe_mlp_dim": config["intermediate_size"]}
    except KeyError as exc:
        raise ValueError(f"{where}: field {exc.args[0]} is missing") from exc
    return keys


def hf_config_problems(config: dict, run_keys: dict[str, Any], model_name: str, where: str = "config.json"
                       ) -> list[str]:
    """Each field of an HF config.json that disagrees with the run's MaxText model keys, named."""
    problems = []
    if config.get("rope_scaling"):
        problems.append(f"{where}: rope_scaling {config['rope_scaling']!r}: MaxText's default RoPE has no scaling")
    try:
        ours = exporter_for(keys_of_hf_config(config, where)).hf_config(None, None)
    except ValueError as exc:
        return [*problems, str(exc)]
    expected = exporter_for(run_keys).hf_config(None, None)
    for field, recipe_field in RECIPE_FIELDS.items():
        if field in expected and ours.get(field) != expected[field]:
            problems.append(f"{where}: {field} is {ours.get(field)!r}, model recipe {model_name!r} has "
                            f"{expected[field]!r} ({recipe_field})")
    return problems


def load_hf_folder(folder: str) -> tuple[dict, dict[str, np.ndarray]]:
    """config.json and every tensor of the folder's *.safetensors files (local folder)."""
    from pathlib import Path

    from safetensors.numpy import load_file

    path = Path(folder)
    config = json.loads((path / "config.json").read_text())
    shards = sorted(path.glob("*.safetensors"))
    if not shards:
        raise ValueError(f"{folder}: no *.safetensors files")
    tensors: dict[str, np.ndarray] = {}
    for shard in shards:
        tensors.update(load_file(str(shard)))
    return config, tensors


def _maxtext_shape(mt_name: str, hf: np.ndarray, keys: dict[str, Any]) -> tuple[int, ...]:
    """One layer's MaxText shape of a tensor HF holds as `hf` (nn.Linear (out, in) -> kernel (in, out))."""
    heads, kv, hd = int(keys["base_num_query_heads"]), int(keys["base_num_kv_heads"]), int(keys["head_dim"])
    if mt_name.endswith("-embedding") or mt_name.endswith("-scale"):
        return hf.shape
    if mt_name.endswith("query-kernel"):
        return (hf.shape[1], heads, hd)
    if mt_name.endswith(("key-kernel", "value-kernel")):
        return (hf.shape[1], kv, hd)
    if mt_name.endswith("out-kernel"):
        return (heads, hd, hf.shape[0])
    return hf.shape[::-1]


def hf_to_maxtext(config: dict, tensors: dict[str, np.ndarray], where: str = "HF folder") -> dict:
    """The scanned MaxText parameter tree ({"params": {"decoder": ..., "token_embedder": ...}}) of an HF model."""
    keys = keys_of_hf_config(config, where)
    exporter = exporter_for(keys)
    hooks = _import_hooks(exporter)
    flat: dict[str, np.ndarray] = {}
    for mt_name, hf_name in exporter.names().items():
        names = hf_name if isinstance(hf_name, list) else [hf_name]
        missing = [n for n in names if n not in tensors]
        if missing:
            if names == ["lm_head.weight"] and keys["logits_via_embedding"]:
                continue
            raise ValueError(f"{where}: tensor {missing[0]} is missing (MaxText {mt_name})")
        chain = hooks.get(mt_name, [])
        slices = []
        for name in names:
            value = np.asarray(tensors[name], dtype=np.float32)
            target = _maxtext_shape(mt_name, value, keys)
            for hook in chain if isinstance(chain, list) else [chain]:
                value = np.asarray(hook(value, target))
            if value.shape != tuple(target):
                raise ValueError(f"{where}: {name} -> {mt_name}: shape {value.shape}, expected {target}")
            slices.append(value.astype(np.float32))
        flat[mt_name] = np.stack(slices) if isinstance(hf_name, list) else slices[0]
    return _nest(_stack_layers(flat, int(keys["base_num_decoder_layers"])))


def _import_hooks(exporter) -> dict:
    """The exporter's MaxText hooks in the to-MaxText direction (same filtering as the export)."""
    from maxtext.checkpoint_conversion.utils import param_mapping

    if isinstance(exporter, MixtralExport):
        config = {"num_hidden_layers": exporter.layers, "hidden_size": exporter.emb}
        return param_mapping.MIXTRAL_MAXTEXT_TO_HF_PARAM_HOOK_FN(config, exporter.mapping_config(), scan_layers=False,
                                                                 saving_to_hf=False)
    config = {"num_hidden_layers": exporter.layers, "head_dim": exporter.head_dim}
    hooks = param_mapping.LLAMA31_MAXTEXT_TO_HF_PARAM_HOOK_FN(config, None, scan_layers=False, saving_to_hf=False)
    return {name: [f for f in chain if f.__name__ != "adjust_rope"] if isinstance(chain, list) else chain
            for name, chain in hooks.items()}


def _stack_layers(flat: dict[str, np.ndarray], layers: int) -> dict[str, np.ndarray]:
    """params-decoder-layers_{i}-X (unscanned) -> params-decoder-layers-X stacked on SCAN_AXIS."""
    per_layer: dict[str, dict[int, np.ndarray]] = defaultdict(dict)
    out = {}
    for name, value in flat.items():
        if "-layers_" in name:
            head, rest = name.split("-layers_", 1)
            index, tail = rest.split("-", 1)
            per_layer[f"{head}-layers-{tail}"][int(index)] = value
        else:
            out[name] = value
    for name, by_index in per_layer.items():
        out[name] = np.stack([by_index[i] for i in range(layers)], axis=SCAN_AXIS)
    return out


def _nest(flat: dict[str, np.ndarray]) -> dict:
    tree: dict = {}
    for name, value in flat.items():
        *parents, leaf = name.split("-")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


def write_maxtext_checkpoint(folder: str, params: dict) -> str:
    """Write `params` as MaxText's converter does (step 0); returns the step folder (<folder>/0)."""
    from maxtext.checkpoint_conversion.utils.utils import save_weights_to_checkpoint

    save_weights_to_checkpoint(folder, params, device_count=1, use_ocdbt=True, use_zarr3=True)
    return f"{folder.rstrip('/')}/0"


def read_hf_config(uri: str) -> dict:
    """config.json of an HF folder, local or gs://."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(uri)
    with fs.open(f"{path.rstrip('/')}/config.json", "r") as f:
        return json.load(f)


def imported_checkpoint(storage, resolved):
    """The MaxText step folder converted from a cleared `format: hf` entry, converted now unless an
    earlier run committed it: weights/<name>/<checksum[:16]>/ (a new folder checksum, a new import)."""
    import dataclasses
    import tempfile

    import fsspec

    from marin_assets.core import layout

    parts = (layout.WEIGHTS, resolved.name, resolved.checksum[:16])
    if not storage.is_committed(*parts):
        fs, path = fsspec.core.url_to_fs(resolved.hf_folder)
        with tempfile.TemporaryDirectory() as local, storage.atomic_dir(*parts) as staged:
            if "://" in resolved.hf_folder:
                fs.get(path.rstrip("/") + "/", local + "/", recursive=True)
            config, tensors = load_hf_folder(local if "://" in resolved.hf_folder else path)
            params = hf_to_maxtext(config, tensors, where=resolved.hf_folder)
            write_maxtext_checkpoint(staged.path, params)
            staged.write_json({"hf_folder": resolved.hf_folder, "checksum": resolved.checksum}, "import.json")
    return dataclasses.replace(resolved, checkpoint_dir=f"{storage.committed_uri(*parts)}/0")
