"""py3langid's classifier over many windows at once, on its memory-mapped model (`language.identifier: fast`)."""
