"""Silence, at their source, two notices the trainer process printed on every run about optional
dependencies it does not use: installed in maxtext_entry before MaxText is imported.

- transformers logs "PyTorch was not found. Models won't be available ..." when it is imported
  (MaxText's tokenizer imports it); training here is JAX and uses only its tokenizers. It honours
  TRANSFORMERS_NO_ADVISORY_WARNINGS for exactly this advice.
- MaxText's gcloud_stub prints "[NO-OP] mldiagnostics: dependency missing; using stub." each time
  a module asks for Google Cloud ML Diagnostics (six per run); the package is not installed and
  `managed_mldiagnostics` is off. Where it is absent, MaxText gets its own stub without the print;
  installed, the real one is used as before.

Every other line (and any other missing dependency) still prints.
"""

from __future__ import annotations

import importlib.util
import os

MLDIAGNOSTICS_PACKAGE = "google_cloud_mldiagnostics"


def quiet_optional_dependencies() -> None:
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if importlib.util.find_spec(MLDIAGNOSTICS_PACKAGE) is not None:
        return
    from maxtext.common import gcloud_stub

    make_stub = getattr(gcloud_stub, "_mldiagnostics_stub", None)
    if make_stub is None:  # a MaxText without that stub: leave its behaviour alone
        return
    stub = make_stub()  # (module stand-in, is_stub=True): what mldiagnostics_modules returns after its print
    gcloud_stub.mldiagnostics_modules = lambda: stub
