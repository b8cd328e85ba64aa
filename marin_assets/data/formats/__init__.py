"""One reader per raw format (formats/registry.py); `marin_assets.data.formats.readers` is the entry point that picks one."""
