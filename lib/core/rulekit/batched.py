"""rulekit, batch-aware helpers (vectorized jacobians): the leading `BATCH_NDIM` axes of the
cotangent `g` are rows of the jacobian. See `rulekit`."""

import numpy as np

from .. import dnp
from .arrays import einsum_vjp, replace_at
from .shapes import (BATCH_NDIM, ndim_of, inverse_permutation, matmul_vjp_left, matmul_vjp_right,
                             reduced_shape, shape_of, swap_last)


def batch_shape(g):
    """The leading batch axes of a cotangent: () outside a vectorized jacobian."""
    return shape_of(g)[:BATCH_NDIM[0]]


def negative_axis(axis, ndim):
    """`axis` of an `ndim`-array counted from the end, so it also names that axis after
    leading batch axes are added (None: every axis; tuples stay tuples)."""
    if axis is None:
        return tuple(range(-ndim, 0))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % ndim - ndim for a in axis)
    return int(axis) % ndim - ndim if ndim else -1


def reshape_like(g, x):
    """`g` reshaped to x's shape, keeping the batch axes: Reshape's, ExpandDims' VJP."""
    return dnp.reshape(g, batch_shape(g) + shape_of(x))


def primal_keepdims(ans, shape, axis=None, keepdims=False):
    """A reduction's primal result reshaped to broadcast against its input of `shape`.

    Like `keepdims_shape`, but for `ans` (never batched), so it holds inside a jacobian.
    """
    return ans if keepdims else dnp.reshape(ans, reduced_shape(shape, axis))


def untranspose(g, axes):
    """Undo `transpose(x, axes)` on `g`, keeping the batch axes first: Transpose's VJP."""
    batch = BATCH_NDIM[0]
    if not batch:
        return dnp.transpose(g, inverse_permutation(axes))
    ndim = len(shape_of(g)) - batch
    inverse = tuple(range(ndim))[::-1] if axes is None else inverse_permutation([a % ndim for a in axes])
    return dnp.transpose(g, tuple(range(batch)) + tuple(batch + i for i in inverse))


def _is_basic_index(index):
    return all(item is None or item is Ellipsis or isinstance(item, (slice, int, np.integer))
               and not isinstance(item, (bool, np.bool_)) for item in index)


def _batch_last(index, ndim):
    """`index` with its Ellipsis spelled out for an `ndim` array: trailing axes then stay
    last in the result, whatever NumPy does with advanced indices."""
    if not any(item is Ellipsis for item in index):
        return index
    used = sum(1 for item in index if item is not None and item is not Ellipsis
               and not isinstance(item, (bool, np.bool_)))
    at = next(i for i, item in enumerate(index) if item is Ellipsis)
    return index[:at] + (slice(None),) * (ndim - used) + index[at + 1:]


def index_rows(g, index):
    """g[index] applied to each batch row of `g`: the VJP of StridedSliceGrad.

    Basic indices get leading full slices; advanced ones may move axes (NumPy puts
    separated index arrays first), so the batch axes are moved last around the index.
    """
    batch = BATCH_NDIM[0]
    if not batch:
        return dnp.getitem(g, index)
    if _is_basic_index(index):
        return dnp.getitem(g, (slice(None),) * batch + tuple(index))
    lead, tail = tuple(range(batch)), tuple(range(-batch, 0))
    picked = dnp.getitem(dnp.moveaxis(g, lead, tail), _batch_last(tuple(index), len(shape_of(g)) - batch))
    return dnp.moveaxis(picked, tail, lead)


def unindex_like(g, x, index):
    """Zeros shaped like `x` with `g` added at `index`, per batch row: getitem's VJP."""
    batch = BATCH_NDIM[0]
    if not batch:
        return dnp.unindex(g, shape_of(x), index)
    rows = batch_shape(g)
    if _is_basic_index(index):
        return dnp.unindex(g, rows + shape_of(x), (slice(None),) * batch + tuple(index))
    lead, tail = tuple(range(batch)), tuple(range(-batch, 0))
    scattered = dnp.unindex(dnp.moveaxis(g, lead, tail), shape_of(x) + rows,
                            _batch_last(tuple(index), len(shape_of(x))))
    return dnp.moveaxis(scattered, tail, lead)


def einsum_vjp_rows(g, operands, argnum, subscripts):
    """`einsum_vjp` for a cotangent with leading batch axes: they get labels of their own,
    carried by the output and by a broadcast stand-in for operand `argnum`."""
    batch = BATCH_NDIM[0]
    if not batch:
        return einsum_vjp(g, operands, argnum, subscripts)
    import string  # here, not at the top: every name of rulekit is one a rule may use
    labels = "".join([c for c in string.ascii_letters if c not in subscripts][:batch])
    lhs, output = subscripts.split("->")
    inputs = lhs.split(",")
    inputs[argnum] = labels + inputs[argnum]
    stand_in = np.broadcast_to(np.zeros((), dtype=dnp.result_dtype(g)),
                               batch_shape(g) + shape_of(operands[argnum]))
    BATCH_NDIM[0] = 0  # the rows are now an ordinary einsum label
    try:
        return einsum_vjp(g, replace_at(operands, argnum, stand_in), argnum,
                          ",".join(inputs) + "->" + labels + output)
    finally:
        BATCH_NDIM[0] = batch


def _rows_product(rows, other):
    """`rows @ other` for the (R, m) stack of a batch of cotangents: jacobians seed one-hot rows
    (rows of the identity), and elementwise rules keep them so, where the product is each row's
    one value times one row of `other`, O(R * n) instead of a GEMM's O(R * m * n). The same
    numbers (the products a GEMM adds to them are exact zeros: taken only where `other` is
    finite); plain arrays only, a GEMM otherwise."""
    if rows.__class__ is np.ndarray and other.__class__ is np.ndarray and rows.ndim == 2 and other.ndim == 2 \
            and rows.shape[1] >= 128 and rows.dtype.kind == other.dtype.kind == "f":  # (the sums saved are long)
        nonzero = np.count_nonzero(rows)  # (one pass, no copy: dense cotangents stop here)
        if nonzero <= rows.shape[0]:
            at = (rows != 0).argmax(axis=1)  # each row's first nonzero (0 in a row of zeros)
            values = rows[np.arange(rows.shape[0]), at]
            # as many nonzero rows as nonzeros: no row holds two
            if np.count_nonzero(values) == nonzero and np.isfinite(other).all():
                return np.take(other, at, axis=0) * values[:, None]
    return dnp.matmul(rows, other)


def matmul_cotangent_x(g, x, y):
    """`matmul_vjp_left`, with one matrix product instead of a stack of matrix-vector
    products when x is a vector and y a matrix (g may carry leading batch axes)."""
    if (g.__class__ is np.ndarray and x.__class__ is np.ndarray and y.__class__ is np.ndarray
            and g.ndim == 2 and x.ndim == 2 and y.ndim == 2):
        return np.matmul(g, y.T)  # plain matrices: what the general path computes, directly
    if len(shape_of(g)) == 2 and len(shape_of(x)) == 2 and len(shape_of(y)) == 2:
        return dnp.matmul(g, swap_last(y))  # matrices of any kind (dual numbers): the same, directly
    if ndim_of(x) == 1 and ndim_of(y) == 2:
        return dnp.matmul(g, swap_last(y))
    if ndim_of(x) == 2 and ndim_of(y) == 2 and ndim_of(g) > 2:
        # batch rows (m, p) stacked as one (rows * m, p) matrix: one GEMM, not a stack of them
        rows = shape_of(g)[:-2]
        flat = _rows_product(dnp.reshape(g, (-1, shape_of(g)[-1])), swap_last(y))
        return dnp.reshape(flat, rows + shape_of(x))
    return matmul_vjp_left(g, x, y)


def matmul_cotangent_y(g, x, y):
    """`matmul_vjp_right`, with one matrix product when y is a vector: its cotangent sums
    g times x over every row of x (g may carry leading batch axes)."""
    if (g.__class__ is np.ndarray and x.__class__ is np.ndarray and y.__class__ is np.ndarray
            and g.ndim == 2 and x.ndim == 2 and y.ndim == 2):
        return np.matmul(x.T, g)  # plain matrices: what the general path computes, directly
    if len(shape_of(g)) == 2 and len(shape_of(x)) == 2 and len(shape_of(y)) == 2:
        return dnp.matmul(swap_last(x), g)  # matrices of any kind (dual numbers): the same, directly
    if ndim_of(x) == 1 and ndim_of(g) == 1 and ndim_of(y) == 2:
        # a vector x: the outer product of x and g, as one einsum op instead of two
        # expand_dims and a broadcasting multiply (each element is the same one product);
        # under vmap, one batched op: every example's outer product at once
        if x.__class__ is np.ndarray and g.__class__ is np.ndarray:
            return np.multiply.outer(x, g)  # plain vectors: the same products, directly
        return dnp.einsum("i,j->ij", x, g)
    if ndim_of(y) == 1 and ndim_of(x) >= 2:
        rows = dnp.reshape(g, batch_shape(g) + (-1,)) if ndim_of(x) > 2 else g
        return dnp.matmul(rows, dnp.reshape(x, (-1, shape_of(x)[-1])) if ndim_of(x) > 2 else x)
    if ndim_of(x) == 2 and ndim_of(y) == 2 and ndim_of(g) > 2:
        # (x.T @ g_b).T = g_b.T @ x for every batch row b: the rows' transposes stacked as one
        # (rows * p, m) matrix times x is one GEMM (a (n, 1) column layout needs no copy)
        rows, p = shape_of(g)[:-2], shape_of(g)[-1]
        flat = _rows_product(dnp.reshape(swap_last(g), (-1, shape_of(x)[0])), x)
        return swap_last(dnp.reshape(flat, rows + (p, shape_of(x)[1])))
    return matmul_vjp_right(g, x, y)
