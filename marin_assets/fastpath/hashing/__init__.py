"""SHA-1 in XLA for the datasketch-compatible MinHash family, and the on-disk cache of compiled kernels."""
