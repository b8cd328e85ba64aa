import dagster as dg

defs = dg.Definitions()
