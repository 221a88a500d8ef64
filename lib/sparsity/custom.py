"""Functions with user-given derivatives (custom_jvp, custom_vjp, custom_gradient) called on
`Pattern`s, during sparsity detection.

Their rules may differentiate anything (a straight-through estimator's is the identity where
the code computes a rounding, whose derivative is zero), so their code's pattern cannot be
trusted: every floating output depends on every input that any argument depends on, and those
inputs are coupled (for Hessians). The values are the function's, on the plain arguments.
"""

import numpy as np

from ..core import nest
from ..core.errors import RefusalError
from ..core.traced import Traced
from ..forward.dual import Dual
from ..reverse.tensor import Tensor
from .pattern import DETECTING, Pattern, as_rows


def holds_patterns(args, kwargs):
    """True when a Pattern is among the arguments (only looked for while a detection runs)."""
    if not DETECTING[0]:
        return False
    leaves = nest.flatten([list(args), kwargs])
    if any(leaf.__class__ is Pattern for leaf in leaves):
        return True
    for leaf in leaves:
        while isinstance(leaf, (Tensor, Dual)):
            leaf = leaf._value if isinstance(leaf, Tensor) else leaf.primal
            if leaf.__class__ is Pattern:  # under a transform inside f: not followed
                raise RefusalError("[sparsity='auto'] f differentiates a function with custom derivatives "
                                   "(custom_jvp, custom_vjp, custom_gradient) inside another transform; "
                                   "its pattern cannot be detected. Pass the pattern (sparsity=a boolean "
                                   "array), or use sparsity=None.")
    return False


def dense_custom(args, kwargs, run):
    """`run(args, kwargs)` on the plain values; each floating output a Pattern that depends on
    every input the Pattern arguments depend on."""
    leaves = nest.flatten([list(args), kwargs])
    found = [leaf for leaf in leaves if leaf.__class__ is Pattern]
    trace = found[0]._trace
    n = trace.n
    union = np.zeros(n, dtype=bool)
    for leaf in found:
        if leaf.deps is not None:
            union |= as_rows(leaf.deps, n).any(axis=0)
    trace.couple(union[None], union[None])
    plain = lambda leaf: leaf._value if leaf.__class__ is Pattern else leaf  # noqa: E731
    result = run(nest.map_structure(plain, list(args)), nest.map_structure(plain, kwargs))

    def as_pattern(value):
        if isinstance(value, Traced) or np.asarray(value).dtype.kind not in "fc":
            return value
        return Pattern(np.asarray(value), np.broadcast_to(union, np.shape(value) + (n,)), trace)
    return nest.map_structure(as_pattern, result)
