"""spaCy's blank English tokenizer re-implemented over its rules as data (`filters.words: fast`)."""
