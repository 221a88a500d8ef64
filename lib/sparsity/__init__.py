"""Structure-aware derivatives: the sparsity of Jacobians and Hessians, and the colorings that
let a few products give them all.

- `pattern`: `Pattern`, a value carrying which inputs each element depends on, and `Trace`,
  which inputs a nonlinear op couples (for Hessians);
- `rules`: each op's pattern rule, from the registry where it can (elementwise, linear,
  non-differentiable), written for reductions, matmul, einsum, cumsum, diff and the ops that
  move elements; dense for every other op;
- `bind`: an op on Patterns (routed by level from `forward/dual.py`'s `bind`);
- `coloring`: column and star colorings, and `Compression` (where each entry is read from);
- `detect`: a function's patterns, detected once per shape or given, and their compressions.

`functional/` uses them for `jacfwd`, `jacrev` and `hessian` with `sparsity=`.
"""

from . import bind  # noqa: F401  (installs the binder in forward/dual.py's router)
from .detect import Plans, check_rows, check_sparse_call
from .pattern import Pattern

__all__ = ["Pattern", "Plans", "check_rows", "check_sparse_call"]
