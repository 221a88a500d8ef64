"""Reverse mode: `Tensor`, the per-op binder (`dispatch`), the flat tape and its jacobians."""
