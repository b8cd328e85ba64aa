"""pyspark's Python daemon for local Spark sessions, importing pyspark from the installed package.

Spark puts SPARK_HOME/python/lib/pyspark.zip (and py4j's zip) first on its Python workers' path.
Python keeps no bytecode for modules imported from a zip, so every daemon and worker process compiled
pyspark from source: ~2 s of CPU a cleaning round of the Debian benchmark on 2 cores. With a pip
installed pyspark those zips ship inside the installed package, which holds the same modules with
compiled bytecode; this daemon moves the zips behind it on sys.path, then runs pyspark's own daemon,
whose forked workers inherit the path. A SPARK_HOME elsewhere (another Spark) keeps its zips first.

Run by Spark as `python -m marin_assets.core.spark_daemon` (spark.python.daemon.module, local
sessions: resources/spark.py). Its package imports nothing, so no thread starts before the forks.
"""

from __future__ import annotations

import os
import sys

SPARK_ZIPS = os.path.join("python", "lib", "")  # SPARK_HOME/python/lib/<zip>


def installed_zips(path: list[str]) -> list[str]:
    """The entries of `path` that are zips inside a pyspark package importable from another entry."""
    found = []
    for entry in path:
        home, _, name = entry.rpartition(os.sep + SPARK_ZIPS)
        if name.endswith(".zip") and os.path.basename(home) == "pyspark" and os.path.dirname(home) in path:
            found.append(entry)
    return found


def demote_installed_zips(path: list[str]) -> None:
    """Move installed_zips(path) to the end of `path`, in place; every other entry keeps its order."""
    zips = installed_zips(path)
    path[:] = [entry for entry in path if entry not in zips] + zips


if __name__ == "__main__":
    demote_installed_zips(sys.path)
    from pyspark import daemon

    daemon.manager()
