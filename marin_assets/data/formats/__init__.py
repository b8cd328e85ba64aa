"""One reader per raw format; `marin_assets.data.readers` is the entry point that picks one."""
