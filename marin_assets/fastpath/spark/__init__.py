"""PySpark internals: Hadoop's qualified path through the Py4J gateway."""
