"""A real GCS API on 127.0.0.1 for tests: gcp-storage-emulator (pure Python) in a thread.

Usage in any test module:

    from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (the fixture)

    def test_x(gcs_emulator):
        storage = Storage(gcs_emulator.root("my-prefix"))   # gs://marin-test/my-prefix

gcsfs finds the emulator through STORAGE_EMULATOR_HOST and uses anonymous credentials (set through
fsspec's per-protocol config, so `fsspec.url_to_fs("gs://...")` needs no extra options). gcsfs'
default class (ExtendedGcsFileSystem) first asks the Storage Control gRPC API for the bucket
layout, which the emulator does not serve (it retries for minutes), so the plain JSON-API class
`gcsfs.core.GCSFileSystem` is registered for gs:// while the emulator runs. The emulator also lacks
the JSON API's `moveTo` (gcsfs' `mv`, answered 501 and retried for ~30 s before gcsfs falls back
to copy+delete); `_add_move_route` serves it with the emulator's own copy and delete. Everything (environment,
fsspec config and registry, gcsfs' instance cache) is restored on exit.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import fsspec
import fsspec.config
import gcsfs
import gcsfs.core
import pytest

DEFAULT_BUCKET = "marin-test"
_GCS_PROTOCOLS = ("gs", "gcs")


@dataclass(frozen=True)
class GcsEmulator:
    host: str  # http://127.0.0.1:PORT, the value of STORAGE_EMULATOR_HOST
    bucket: str

    def root(self, prefix: str = "") -> str:
        """A gs:// root URI; a fresh random prefix by default so tests never share objects."""
        prefix = prefix or f"t-{uuid.uuid4().hex[:8]}"
        return f"gs://{self.bucket}/{prefix}"

    def env(self) -> dict[str, str]:
        """What a subprocess (MaxText, Spark, orbax/tensorstore) needs to reach the emulator."""
        return {
            "STORAGE_EMULATOR_HOST": self.host,
            "TENSORSTORE_GCS_HTTP_URL": self.host,
            # A fresh process importing gcsfs then picks the plain JSON-API class (see above).
            "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
        }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _clear_gcsfs_cache() -> None:
    for cls in {gcsfs.GCSFileSystem, gcsfs.core.GCSFileSystem}:
        cls.clear_instance_cache()


def _add_move_route() -> None:
    """Serve POST .../b/B/o/SRC/moveTo/o/DST (same-bucket move) as copy + delete."""
    from http import HTTPStatus

    from gcp_storage_emulator import server
    from gcp_storage_emulator.handlers import objects

    def move(request, response, storage, *args, **kwargs):
        request.params["dest_bucket_name"] = request.params["bucket_name"]
        objects.copy(request, response, storage)
        if response.status == HTTPStatus.OK:
            storage.delete_file(request.params["bucket_name"], request.params["object_id"])

    regex = (
        r"^/storage/v1/b/(?P<bucket_name>[-.\w]+)/o/(?P<object_id>.*[^/]+)"
        r"/moveTo/o/(?P<dest_object_id>.*[^/]+)$"
    )
    if all(route[0] != regex for route in server.HANDLERS):
        server.HANDLERS = ((regex, {"POST": move}), *server.HANDLERS)


@contextlib.contextmanager
def run_gcs_emulator(bucket: str = DEFAULT_BUCKET) -> Iterator[GcsEmulator]:
    """Start the emulator (in memory), point gcsfs at it, and undo everything afterwards."""
    from gcp_storage_emulator.server import create_server

    _add_move_route()
    port = _free_port()
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket=bucket)
    server.start()
    emulator = GcsEmulator(host=f"http://127.0.0.1:{port}", bucket=bucket)
    saved_env = {key: os.environ.get(key) for key in emulator.env()}
    saved_conf = {proto: fsspec.config.conf.get(proto) for proto in _GCS_PROTOCOLS}
    saved_classes = {proto: fsspec.get_filesystem_class(proto) for proto in _GCS_PROTOCOLS}
    os.environ.update(emulator.env())
    for proto in _GCS_PROTOCOLS:
        fsspec.config.conf[proto] = {**(saved_conf[proto] or {}), "token": "anon"}
        fsspec.register_implementation(proto, gcsfs.core.GCSFileSystem, clobber=True)
    _clear_gcsfs_cache()
    try:
        yield emulator
    finally:
        _clear_gcsfs_cache()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for proto, cls in saved_classes.items():
            fsspec.register_implementation(proto, cls, clobber=True)
        for proto, value in saved_conf.items():
            if value is None:
                fsspec.config.conf.pop(proto, None)
            else:
                fsspec.config.conf[proto] = value
        server.stop()


@pytest.fixture
def gcs_emulator() -> Iterator[GcsEmulator]:
    with run_gcs_emulator() as emulator:
        yield emulator
