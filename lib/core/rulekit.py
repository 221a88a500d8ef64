"""The only helpers rules may call besides `dnp`: small named pieces of derivative maths.

Each helper works on plain arrays and on tensors or dual numbers alike, because it only
calls `dnp` (or shape functions): an outer tape records what it does.
"""

import numpy as np

from . import dnp


def shape_of(x):
    """np.shape, without NumPy's dispatch overhead for arrays, scalars and tensors."""
    if x.__class__ is _ndarray:
        return x.shape
    shape = getattr(x, "shape", None)
    return np.shape(x) if shape is None else tuple(shape)


def _ndim(x):
    """np.ndim, without NumPy's dispatch overhead (dual numbers reach it through
    `__array_function__` otherwise)."""
    if x.__class__ is _ndarray:
        return x.ndim
    return len(shape_of(x))


_ndarray = np.ndarray
_add_reduce = np.add.reduce


BATCH_NDIM = [0]  # leading cotangent axes that are a batch (jacobians): set by apply_rules


def unbroadcast(g, shape):
    """Sum `g` down to `shape`, undoing NumPy broadcasting.

    Elementwise VJPs need this: an input of shape (3,) broadcast against (2, 3) received
    each element twice, so its gradient is the sum over the broadcast axes. Leading batch
    axes of a batched cotangent (BATCH_NDIM, set while a jacobian runs) are kept.
    """
    gshape = shape_of(g)
    batch = BATCH_NDIM[0]
    if gshape == shape and not batch:
        return g
    shape = tuple(shape)
    if gshape[batch:] == shape:
        return g
    lead = len(gshape) - batch - len(shape)
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + i for i, n in enumerate(shape) if n == 1 and gshape[batch + lead + i] != 1)
    target = gshape[:batch] + shape
    if g.__class__ is _ndarray:  # plain NumPy: what dnp would call, without its layers
        if axes:
            g = _add_reduce(g, axis=axes)
        return g.reshape(target) if g.shape != target else g
    if axes:
        g = dnp.sum(g, axis=axes, keepdims=False)
    return dnp.reshape(g, target) if shape_of(g) != target else g


def unreduce(g, shape, axis=None, keepdims=False):
    """Broadcast a reduced gradient back to `shape`.

    Sum-like VJPs need this: the cotangent lost the reduced axes, and each input element
    contributed once.
    """
    return dnp.broadcast_to(keepdims_shape(g, shape, axis, keepdims),
                            shape_of(g)[:BATCH_NDIM[0]] + tuple(shape))


def keepdims_shape(g, shape, axis=None, keepdims=False):
    """Reshape a reduction result so it broadcasts against the input of `shape`."""
    if keepdims or axis is None and _ndim(g) == BATCH_NDIM[0] and len(shape) == 0:
        return g
    return dnp.reshape(g, shape_of(g)[:BATCH_NDIM[0]] + reduced_shape(shape, axis))


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
    return dnp.swapaxes(x, -1, -2) if _ndim(x) >= 2 else x


def step(x):
    """1 where x > 0, else 0 (the derivative of relu; relu'(0) = 0 as in TF)."""
    return x > 0


def log_where_positive(x):
    """log(x) where x > 0, else 0: Pow's exponent gradient, NaN-free at x <= 0 as in TF."""
    positive = x > 0
    return dnp.where(positive, dnp.log(dnp.where(positive, x, dnp.ones_like(x))), dnp.zeros_like(x))


def matmul_vjp_left(g, x, y):
    """Cotangent of x in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if _ndim(y) == 1:
        if _ndim(x) == 1:
            return dnp.expand_dims(g, -1) * y  # also right for a batch of cotangents
        return unbroadcast(dnp.expand_dims(g, -1) * y, shape_of(x))
    if _ndim(x) == 1:
        return unbroadcast(dnp.matmul(y, dnp.expand_dims(g, -1))[..., 0], shape_of(x))
    return unbroadcast(dnp.matmul(g, swap_last(y)), shape_of(x))


def matmul_vjp_right(g, x, y):
    """Cotangent of y in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if _ndim(x) == 1:
        if _ndim(y) == 1:
            return dnp.expand_dims(g, -1) * x
        return unbroadcast(dnp.expand_dims(x, -1) * dnp.expand_dims(g, -2), shape_of(y))
    if _ndim(y) == 1:
        return unbroadcast(dnp.matmul(swap_last(x), dnp.expand_dims(g, -1))[..., 0], shape_of(y))
    return unbroadcast(dnp.matmul(swap_last(x), g), shape_of(y))


def inverse_permutation(axes):
    """The axes that undo `transpose(x, axes)` (None stays None: a full reversal)."""
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))


def div_no_nan(x, y):
    """x / y, and 0 where y == 0 (TF's div_no_nan): NaN-free gradients of norms at zero."""
    y_is_zero = dnp.equal(y, 0)
    quotient = x / dnp.where(y_is_zero, ones_like(y), y)
    return dnp.where(y_is_zero, zeros_like(quotient), quotient)


def tie_share(x, ans, axis=None, keepdims=False):
    """1 / (number of ties) where `x` equals its max/min `ans`, else 0; shaped like `x`.

    Max and Min VJPs need this: as TF's reduce_max, tied extremes split the gradient evenly.
    """
    hit = dnp.equal(x, keepdims_shape(ans, np.shape(x), axis, keepdims))
    mask = dnp.where(hit, ones_like(x), zeros_like(x))
    return mask / dnp.sum(mask, axis=axis, keepdims=True)


def prod_others(x, axis=None):
    """The product of the other elements of each reduced group, shaped like `x`: Prod's gradient.

    `ans / x` fails at zeros (TF builds it from exclusive cumprods). Here zeros are counted
    per group: with none, it is p / x; with one zero, that slot gets the product p of the
    nonzeros and every other slot gets p / x times the zero (0, but its derivative is right);
    with two zeros, each zero slot gets p times the other zero; with more, 0. So first and
    second derivatives are exact everywhere, and every piece is a dnp call (higher orders).
    """
    is_zero = dnp.equal(x, 0)
    count = dnp.sum(is_zero, axis=axis, keepdims=True)
    ones, zeros = ones_like(x), zeros_like(x)
    nonzero_prod = dnp.prod(dnp.where(is_zero, ones, x), axis=axis, keepdims=True)
    zero_prod = dnp.prod(dnp.where(is_zero, x, ones), axis=axis, keepdims=True)
    other_zero = dnp.sum(dnp.where(is_zero, x, zeros), axis=axis, keepdims=True) - x
    at_zero = dnp.where(dnp.equal(count, 1), nonzero_prod * ones,
                        dnp.where(dnp.equal(count, 2), nonzero_prod * other_zero, zeros))
    return dnp.where(is_zero, at_zero, nonzero_prod / dnp.where(is_zero, ones, x) * zero_prod)


# -- linalg, shape and indexing helpers ------------------------------------------------------

def replace_at(values, argnum, value):
    """`values` with entry `argnum` replaced: a multilinear op's JVP for one input."""
    return tuple(value if i == argnum else v for i, v in enumerate(values))


def einsum_sizes(inputs, operands):
    """The size of each einsum label, broadcast over every operand that carries it."""
    sizes = {}
    for term, operand in zip(inputs, operands):
        for label, n in zip(term, np.shape(operand)):
            sizes[label] = max(sizes.get(label, 1), n)
    return sizes


def einsum_vjp(g, operands, argnum, subscripts):
    """Cotangent of operand `argnum` of einsum(subscripts, *operands).

    It is an einsum of `g` with the other operands, the output and the operand's
    subscripts swapped (`subscripts` is explicit, without ellipsis). Labels found only in
    the operand were summed away, so the cotangent is broadcast along them; a repeated
    label (a diagonal) puts the cotangent on that diagonal; size-1 axes einsum broadcast
    are summed back.
    """
    lhs, output = subscripts.split("->")
    inputs = lhs.split(",")
    own = inputs[argnum]
    others = [s for i, s in enumerate(inputs) if i != argnum]
    sizes = einsum_sizes(inputs, operands)
    unique = "".join(dict.fromkeys(own))
    reachable = "".join(c for c in unique if c in output or any(c in s for s in others))
    result = dnp.einsum(",".join([output] + others) + "->" + reachable, g,
                        *[o for i, o in enumerate(operands) if i != argnum])
    if reachable != unique:
        result = dnp.broadcast_to(
            dnp.reshape(result, tuple(sizes[c] if c in reachable else 1 for c in unique)),
            tuple(sizes[c] for c in unique))
    if unique != own:
        result = diagonal_embed(result, own, sizes)
    return unbroadcast(result, np.shape(operands[argnum]))


def diagonal_embed(x, labels, sizes):
    """Place `x` (axes: the unique `labels` in first-seen order) on the diagonals that the
    repeated labels describe (zeros elsewhere): the adjoint of einsum's 'ii->i'."""
    shape = tuple(sizes[c] for c in labels)
    first = [labels.index(c) for c in labels]
    mask = np.ones(shape, dtype=bool)
    for i, j in enumerate(first):
        if i != j:
            at_i = [1] * len(labels)
            at_j = [1] * len(labels)
            at_i[i] = at_j[j] = shape[i]
            mask = mask & (np.arange(shape[i]).reshape(at_i) == np.arange(shape[i]).reshape(at_j))
    spread = dnp.reshape(x, tuple(shape[i] if i == j else 1 for i, j in enumerate(first)))
    return spread * mask.astype(dnp.result_dtype(x))


def symmetrize(x):
    """(x + x^T) / 2 over the last two axes: the symmetric part of a stack of matrices."""
    return 0.5 * (x + swap_last(x))


def lower_half_diagonal(x):
    """The lower triangle of x with its diagonal halved (Phi in Murray's Cholesky derivative)."""
    n = np.shape(x)[-1]
    return x * (np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(dnp.result_dtype(x))


def matrix_scalar(x):
    """x[..., None, None]: a stack of scalars that broadcasts against a stack of matrices."""
    return dnp.expand_dims(x, (-2, -1))


def axis_index(ndim, axis, key):
    """The index that applies `key` (an int, slice or int array) along `axis` alone."""
    axis = axis % ndim if ndim else 0
    return (slice(None),) * axis + (key,)


def concat_piece(g, arrays, argnum, axis):
    """The part of a concatenation's cotangent that input `argnum` produced."""
    start = sum(np.shape(a)[axis] for a in arrays[:argnum])
    stop = start + np.shape(arrays[argnum])[axis]
    return dnp.getitem(g, axis_index(np.ndim(g), axis, slice(start, stop)))


def untile(g, reps):
    """Sum the `reps` tiled copies in `g` back onto one (Tile's VJP; len(reps) == ndim)."""
    shape = np.shape(g)
    split = tuple(v for r, n in zip(reps, shape) for v in (r, n // r))
    return dnp.sum(dnp.reshape(g, split), axis=tuple(range(0, 2 * len(reps), 2)))


def unpad(g, pad_width):
    """The inner block of a padded array's cotangent (Pad's VJP)."""
    return dnp.getitem(g, tuple(slice(before, n - after)
                                for (before, after), n in zip(pad_width, np.shape(g))))


def cast_back(g, x):
    """`g` cast to x's dtype; None when x is not floating (no gradient into integers, as TF)."""
    dtype = dnp.result_dtype(x)
    return dnp.cast(g, dtype) if dtype.kind in "fc" else None


def cast_tangent(dx, dtype):
    """A Cast's output tangent: `dx` cast to `dtype`, or None for a non-floating result."""
    return dnp.cast(dx, dtype) if np.dtype(dtype).kind in "fc" else None


# -- batch-aware helpers (vectorized jacobians): the leading BATCH_NDIM axes of `g` are rows --

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


def matmul_cotangent_x(g, x, y):
    """`matmul_vjp_left`, with one matrix product instead of a stack of matrix-vector
    products when x is a vector and y a matrix (g may carry leading batch axes)."""
    if _ndim(x) == 1 and _ndim(y) == 2:
        return dnp.matmul(g, swap_last(y))
    return matmul_vjp_left(g, x, y)


def matmul_cotangent_y(g, x, y):
    """`matmul_vjp_right`, with one matrix product when y is a vector: its cotangent sums
    g times x over every row of x (g may carry leading batch axes)."""
    if _ndim(y) == 1 and _ndim(x) >= 2:
        rows = dnp.reshape(g, batch_shape(g) + (-1,)) if _ndim(x) > 2 else g
        return dnp.matmul(rows, dnp.reshape(x, (-1, shape_of(x)[-1])) if _ndim(x) > 2 else x)
    return matmul_vjp_right(g, x, y)
