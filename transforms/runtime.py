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


# -- forward mode (tangent code) ------------------------------------------------------------

def broadcast_tangent(t, ans):
    """The tangent `t` of an elementwise result, broadcast to the shape of the result `ans`."""
    shape = np.shape(ans)
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def batch_size(t):
    """The number of directions k of a vector tangent (its leading axis)."""
    if isinstance(t, (list, tuple)):
        return batch_size(t[0])
    return np.shape(t)[0]


def bt(t, ans):
    """A vector tangent (k, *x.shape) lined up with the result `ans` of an elementwise op:
    (k, 1, ..., *x.shape), so broadcasting pairs direction j with direction j."""
    ndim, out = np.ndim(t) - 1, np.ndim(ans)
    if ndim < 0 or ndim >= out:
        return t
    shape = np.shape(t)
    return np.reshape(t, shape[:1] + (1,) * (out - ndim) + shape[1:])


def broadcast_batch(t, ans, k):
    """A vector tangent of an elementwise result, broadcast to (k, *ans.shape)."""
    shape = (k,) + np.shape(ans)
    t = bt(t, ans) if np.ndim(t) else t
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def zeros_batch(x, k):
    """A zero vector tangent of `x`: k directions."""
    return np.zeros((k,) + np.shape(x))


def each(fn, *tangents):
    """Apply a single-direction tangent rule `fn` to each of the k directions, and stack."""
    k = next(batch_size(t) for t in tangents if isinstance(t, (list, tuple)) or np.ndim(t))
    rows = [fn(*[_row(t, j) for t in tangents]) for j in range(k)]
    if isinstance(rows[0], (list, tuple)):
        return type(rows[0])(np.stack([r[i] for r in rows]) for i in range(len(rows[0])))
    return np.stack(rows)


def _row(t, j):
    if isinstance(t, (list, tuple)):
        return type(t)(_row(x, j) for x in t)
    return t[j] if np.ndim(t) else t


def tangent_item(t, index):
    """`t[index]` of a vector tangent: the batch axis stays in front (tuples index directly)."""
    if isinstance(t, (list, tuple)):
        return t[index]
    return t[(slice(None),) + (index if isinstance(index, tuple) else (index,))]


def batch_index(index):
    """The index of a vector tangent for `x[index]`: the batch axis stays in front."""
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))
