"""The functional API: `jvp`, `grad`, `vjp`, `jacfwd`, `jacrev`, `hessian`, `hvp`, `linearize`.

Functions take and return plain NumPy arrays (float64 stays float64; Python floats become
float64 arrays, NumPy's rule rather than TF's float32) and nested tuples, lists and dicts
of them. `jvp` runs `f` on dual numbers with a fresh tag; `grad` and `vjp` run it on
tensors under a private GradientTape. They nest in any order: inside another transform,
inputs and outputs are that transform's dual numbers or tensors, and every level keeps
its own perturbations (see dual.py).

The API is split by mode: `values` (what goes in and out), `forward_mode`, `reverse_mode`, and
`hessians` (Hessians, Hessian-vector products and the mode-choosing `jacobian`).
"""

from .forward_mode import jacfwd, jvp, linearize
from .reverse_mode import grad, jacrev, value_and_grad, vjp
from .hessians import hessian, hvp, jacobian
from .vectorize import vmap

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "hvp", "linearize", "jacobian", "vmap"]
