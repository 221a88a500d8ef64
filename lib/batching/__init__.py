"""vmap's values and batching rules: `Batched` (batched.py), the binder that routes a registry
op on them by level (bind.py), each op's batching rule (rules.py), and what runs once per
example (loops.py)."""

from . import bind  # noqa: F401  (installs the binder in forward/dual.py's router)
from .batched import Batched

__all__ = ["Batched"]
