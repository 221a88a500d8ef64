"""The only helpers rules may call besides `dnp`: small named pieces of derivative maths.

Each helper works on plain arrays and on tensors or dual numbers alike, because it only
calls `dnp` (or shape functions): an outer tape records what it does.
"""

import numpy as np

from . import numpy_api as dnp


def unbroadcast(g, shape):
    """Sum `g` down to `shape`, undoing NumPy broadcasting.

    Elementwise VJPs need this: an input of shape (3,) broadcast against (2, 3) received
    each element twice, so its gradient is the sum over the broadcast axes.
    """
    gshape = np.shape(g)
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    if axes:
        g = dnp.sum(g, axis=axes, keepdims=False)
    return dnp.reshape(g, shape) if np.shape(g) != tuple(shape) else g


def unreduce(g, shape, axis=None, keepdims=False):
    """Broadcast a reduced gradient back to `shape`.

    Sum-like VJPs need this: the cotangent lost the reduced axes, and each input element
    contributed once.
    """
    return dnp.broadcast_to(keepdims_shape(g, shape, axis, keepdims), shape)


def keepdims_shape(g, shape, axis=None, keepdims=False):
    """Reshape a reduction result so it broadcasts against the input of `shape`."""
    if keepdims or axis is None and np.ndim(g) == 0 and len(shape) == 0:
        return g
    return dnp.reshape(g, reduced_shape(shape, axis))


def reduced_shape(shape, axis):
    """The shape of a keepdims=True reduction of an array of `shape` over `axis`."""
    if axis is None:
        return (1,) * len(shape)
    axes = normalize_axis(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def normalize_axis(axis, ndim):
    """`axis` as a tuple of non-negative ints (None: every axis)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % ndim if ndim else 0 for a in axis)
    return (int(axis) % ndim if ndim else 0,)


def reduced_size(shape, axis):
    """How many input elements fed each output element of a reduction."""
    axes = normalize_axis(axis, len(shape))
    return int(np.prod([shape[a] for a in axes])) if axes else 1


def ones_like(x):
    """An array of ones shaped and typed like `x` (never recorded: a constant)."""
    return np.ones(np.shape(x), dtype=dnp.result_dtype(x))


def zeros_like(x):
    """An array of zeros shaped and typed like `x` (never recorded: a constant)."""
    return np.zeros(np.shape(x), dtype=dnp.result_dtype(x))


def swap_last(x):
    """Swap the last two axes (the matrix transpose of a stack of matrices)."""
    return dnp.swapaxes(x, -1, -2) if np.ndim(x) >= 2 else x


def step(x):
    """1 where x > 0, else 0 (the derivative of relu; relu'(0) = 0 as in TF)."""
    return x > 0


def log_where_positive(x):
    """log(x) where x > 0, else 0: Pow's exponent gradient, NaN-free at x <= 0 as in TF."""
    positive = x > 0
    return dnp.where(positive, dnp.log(dnp.where(positive, x, dnp.ones_like(x))), dnp.zeros_like(x))


def matmul_vjp_left(g, x, y):
    """Cotangent of x in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * y
        return unbroadcast(dnp.expand_dims(g, -1) * y, np.shape(x))
    if np.ndim(x) == 1:
        return unbroadcast(dnp.matmul(y, dnp.expand_dims(g, -1))[..., 0], np.shape(x))
    return unbroadcast(dnp.matmul(g, swap_last(y)), np.shape(x))


def matmul_vjp_right(g, x, y):
    """Cotangent of y in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * x
        return unbroadcast(dnp.expand_dims(x, -1) * dnp.expand_dims(g, -2), np.shape(y))
    if np.ndim(y) == 1:
        return unbroadcast(dnp.matmul(swap_last(x), dnp.expand_dims(g, -1))[..., 0], np.shape(y))
    return unbroadcast(dnp.matmul(swap_last(x), g), np.shape(y))


def inverse_permutation(axes):
    """The axes that undo `transpose(x, axes)` (None stays None: a full reversal)."""
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))
