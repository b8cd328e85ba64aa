"""Training stage: model recipes, resources, preflight, MaxText launchers, checkpoints."""
