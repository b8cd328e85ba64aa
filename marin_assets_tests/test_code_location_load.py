"""Loading the code location stays cheap: every CLI call, run worker and `dagster dev` pays for it.

Libraries that take seconds to import (statsmodels, scipy, matplotlib, the Kubernetes client) are
imported by the steps that use them, never by loading the definitions.
"""

import json
import subprocess
import sys

DEFERRED = ("statsmodels", "scipy", "matplotlib", "kubernetes", "pyspark", "jax", "maxtext")


def test_loading_the_definitions_imports_no_heavy_library():
    probe = ("import json, sys; import marin_assets.definitions as d; d.defs.resolve_asset_graph(); "
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(DEFERRED)!r})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []
