"""A path as Hadoop qualifies it, asked of the JVM through PySpark's private gateway (`spark._jvm`, `spark._jsc`).

PySpark has no public call for Hadoop's qualified URI of a path (what `_metadata.file_path` holds);
the driver's Py4J gateway reaches Hadoop's own `FileSystem.makeQualified`, so no rule is rewritten
here. fastpath/test_tripwires.py checks that the gateway attributes exist on the installed PySpark.
"""

from __future__ import annotations


def qualified_uri(spark, path: str) -> str:
    """The path as Spark's `_metadata.file_path` names it, after same_file_key: Hadoop's qualified,
    percent-encoded URI."""
    jvm_path = spark._jvm.org.apache.hadoop.fs.Path(path)
    fs = jvm_path.getFileSystem(spark._jsc.hadoopConfiguration())
    return fs.makeQualified(jvm_path).toUri().toString()
