import dagster as dg
from pydantic import Field

from marin_assets.core.storage import Storage


class StorageResource(dg.ConfigurableResource):
    """The root URI every asset writes under: a local folder, or gs://bucket/prefix."""

    root_uri: str = Field(description="Local folder or gs://bucket/prefix")

    @property
    def storage(self) -> Storage:
        return Storage(self.root_uri)
