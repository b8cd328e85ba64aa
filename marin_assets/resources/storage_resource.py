import dagster as dg
from pydantic import Field

from marin_assets.core.storage import Storage
from marin_assets.resources.run_liveness import record_run_process


class StorageResource(dg.ConfigurableResource):
    """The root URI every asset writes under: a local folder, or gs://bucket/prefix."""

    root_uri: str = Field(description="Local folder or gs://bucket/prefix")

    @property
    def storage(self) -> Storage:
        return Storage(self.root_uri)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # every asset uses storage: this is where a run of any launcher says which process runs it
        record_run_process(context.instance, context.dagster_run)
