"""Stand-in stage assets (same keys and partitioning as the real ones) for governance tests.

They write real files through Storage.atomic_dir and end with record_output, exactly as the stage
assets do, so provenance, licenses and audits are tested without running Spark or MaxText.
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.data.sources.compliance import compliance_verdict, load_policy
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.data.sources.licenses import INVENTORY_NAME, require_mixture_cleared
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.local_resources import local_resources

SOURCES = load_sources().names
SOURCE_PARTITIONS = dg.StaticPartitionsDefinition(SOURCES)
MIXTURES = dg.StaticPartitionsDefinition(["sample"])
RUNS = dg.StaticPartitionsDefinition(["tiny"])


class RawConfig(dg.Config):
    cleared: bool = True
    snapshot: str = "v1"


@dg.asset(partitions_def=SOURCE_PARTITIONS)
def raw_corpus(context: dg.AssetExecutionContext, config: RawConfig, storage: StorageResource):
    source = context.partition_key
    # Cleared: the files hash to the registry's checksum; not cleared: they changed (a checksum mismatch).
    checksum = load_sources().get(source).provenance.checksum if config.cleared else f"hash-{source}-{config.snapshot}"
    with storage.storage.atomic_dir(layout.RAW, source) as staged:
        inventory = {
            "source": source,
            "files": [{"path": "a.jsonl", "size": 3, "sha256": f"{source}-{config.snapshot}"}],
            "content_hash": checksum,
        }
        verdict = compliance_verdict(source, load_sources().get(source), inventory, load_policy())
        inventory["compliance"] = verdict.as_json()  # recorded as raw_corpus records it
        staged.write_json(inventory, INVENTORY_NAME)
        return record_output(context, staged, recipe={"source": source}, code_version="raw-1", sources=[source])


@dg.asset(partitions_def=MIXTURES, deps=[dg.AssetDep(raw_corpus, partition_mapping=dg.AllPartitionMapping())])
def mixture(context: dg.AssetExecutionContext, storage: StorageResource):
    with storage.storage.atomic_dir(layout.MIXTURES, context.partition_key) as staged:
        staged.write_json({"weights": {s: 1 / len(SOURCES) for s in SOURCES}}, "mixture.json")
        return record_output(
            context, staged, recipe={"weights": "uniform"}, code_version="mix-1", stats={"documents": 3},
        )  # no sources=: inherited from the raw_corpus manifests


@dg.asset(
    partitions_def=RUNS,
    deps=[dg.AssetDep(mixture, partition_mapping=dg.StaticPartitionMapping({"sample": "tiny"}))],
)
def training_run(context: dg.AssetExecutionContext, storage: StorageResource):
    # The gate every training run passes first, on the sources behind its mixture.
    st = storage.storage
    require_mixture_cleared(st, "training_run[tiny]", "sample")
    with storage.storage.atomic_dir(layout.TRAINING, context.partition_key) as staged:
        with staged.storage.fs.open(staged.join("checkpoint.bin"), "wb") as f:
            f.write(b"weights")
        return record_output(
            context, staged, recipe={"model": "tiny", "mixture": "sample"}, code_version="train-1",
            devices=["cpu:0"],
        )


STAND_INS = [raw_corpus, mixture, training_run]


def materialize_chain(instance: dg.DagsterInstance, root: str) -> None:
    resources = local_resources(root)
    for source in SOURCES:
        dg.materialize(STAND_INS, selection=[raw_corpus], partition_key=source, instance=instance, resources=resources)
    dg.materialize(STAND_INS, selection=[mixture], partition_key="sample", instance=instance, resources=resources)
    dg.materialize(STAND_INS, selection=[training_run], partition_key="tiny", instance=instance, resources=resources)
