"""Pure, shared building blocks: recipes, hashing, storage, provenance. No Dagster imports here."""
