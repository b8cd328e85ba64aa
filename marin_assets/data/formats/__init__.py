"""The raw formats, one class per file (format_base.FORMATS finds them); `marin_assets.data.formats.readers` is the entry point."""
