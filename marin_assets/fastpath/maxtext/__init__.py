"""MaxText internals the trainer relies on: the preemption checkpoint hook, the optional-dependency stub."""
