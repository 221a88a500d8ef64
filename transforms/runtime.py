"""What generated adjoint code imports: rulekit helpers plus four small adjoint utilities.

Kept tiny and free of the transformer, so a module written by `df.save(path)` needs only
NumPy and this module.
"""

import math  # noqa: F401  (generated code spells scalar derivatives with math)

import numpy as np

from dualtape import numpy_api as dnp  # noqa: F401  (rules without a NumPy twin, e.g. dnp.sigmoid)
from dualtape.rulekit import *  # noqa: F401,F403  (unbroadcast, unreduce, matmul_vjp_left, ...)
from dualtape.rulekit import unbroadcast  # noqa: F401


def zeros_like(x):
    """A zero adjoint for `x`: 0.0 for scalars, float zeros for arrays, a list for sequences."""
    if isinstance(x, (list, tuple)):
        return [zeros_like(item) for item in x]
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "fc" else float)
    return 0.0


def owned(g):
    """A private copy of an adjoint that will be updated in place (`bx[i] = 0`, add_at)."""
    if isinstance(g, (list, tuple)):
        return list(g)
    return np.array(g, dtype=float if np.asarray(g).dtype.kind not in "fc" else None)


def add_at(b, index, g):
    """`b[index] += g` on an owned adjoint; repeated fancy indices add up, as np.add.at."""
    if isinstance(b, list):
        b[index] = b[index] + g
    elif isinstance(index, np.ndarray) or (isinstance(index, tuple) and any(isinstance(i, (np.ndarray, list)) for i in index)) or isinstance(index, list):
        np.add.at(b, index, g)
    else:
        b[index] += g
    return b


def accumulate(b, g):
    """`b + g` for adjoints that may be lists (adjoints of lists and tuples)."""
    if isinstance(b, list):
        return [accumulate(x, y) for x, y in zip(b, g)] if isinstance(g, (list, tuple)) else [x + g for x in b]
    if isinstance(g, list):
        return [b + y for y in g]
    return b + g


def saved(value):
    """A copy of an overwritten slice, pushed before a subscript write."""
    return value.copy() if isinstance(value, np.ndarray) else value
