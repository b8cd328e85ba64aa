"""spaCy's blank English tokenizer re-implemented over its rules as data (`words: fast`)."""
