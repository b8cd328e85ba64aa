"""Dagster wiring of the task sets as cleaning's decontamination sets: task_set_decontamination.

One unpartitioned asset holds every decontaminating task set's items (evaluation.task_set_decontamination),
versioned by what they depend on (names, text fields, files' sha256; not baselines or descriptions), so
opting a task set in or out, or changing its files, stales it and with it every cleaned table (the data
stage's cleaned_documents depends on it by key).
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.evaluation.task_set_decontamination import MANIFEST, decontaminating, write_items
from marin_assets.evaluation.task_sets import TaskSetsRegistry
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource

GROUP = "evaluation"


def build_decontamination_asset(registry: TaskSetsRegistry) -> dg.AssetsDefinition:
    @versioned(decontaminating(registry))
    @dg.asset(name="task_set_decontamination", group_name=GROUP, kinds={"python", "parquet"},
              description="Every registered task set's items (its decontamination_fields, normalised; "
                          "`decontaminate: false` opts a set out): cleaning removes them from the corpus "
                          "and reports hits per item.")
    def task_set_decontamination(context: dg.AssetExecutionContext, storage: StorageResource):
        with storage.storage.atomic_dir(layout.TASK_SET_DECONTAMINATION) as staged:
            manifest = write_items(registry, staged.path)
            staged.write_json(manifest, MANIFEST)
            sets = manifest["task_sets"]
            context.log.info(f"decontamination items: {', '.join(f'{n} {e['items']}' for n, e in sets.items()) or 'none'}; "
                             f"opted out: {manifest['opted_out'] or 'none'}")
            return record_output(
                context, staged, recipe={"task_sets": decontaminating(registry)},
                stats={"task_sets": len(sets), "items": sum(e["items"] for e in sets.values())},
                extra_metadata={"task_sets": dg.MetadataValue.json(sets),
                                "opted_out": dg.MetadataValue.json(manifest["opted_out"])},
                sources=[])

    return task_set_decontamination
