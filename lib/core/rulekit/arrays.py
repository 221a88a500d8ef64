"""rulekit, arrays: linalg, shape and indexing pieces of rules (`einsum_vjp`, `symmetrize`,
`concat_piece`, `untile`, ...). See `rulekit`."""

import numpy as np

from .. import dnp
from .shapes import swap_last, unbroadcast


def replace_at(values, argnum, value):
    """`values` with entry `argnum` replaced: a multilinear op's JVP for one input."""
    return tuple(value if i == argnum else v for i, v in enumerate(values))


def einsum_sizes(inputs, operands):
    """The size of each einsum label, broadcast over every operand that carries it."""
    sizes = {}
    for term, operand in zip(inputs, operands):
        for label, n in zip(term, np.shape(operand)):
            sizes[label] = n if sizes.get(label, 1) == 1 else sizes[label]  # 1 broadcasts (to 0 too)
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


def tile_reps(reps, ndim):
    """np.tile's `reps` for an array of `ndim` axes, as NumPy reads it: an int is (reps,), and
    reps is padded with leading 1s to max(len(reps), ndim) axes (beyond ndim, x is promoted)."""
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    return (1,) * (ndim - len(reps)) + reps


def untile(g, reps, x_shape):
    """Sum the tiled copies in `g` back onto one of shape `x_shape` (Tile's VJP). `reps` as NumPy
    reads it (`tile_reps`); axes of g before the tiled result's are batch axes."""
    reps = tile_reps(reps, len(x_shape))
    ndim = len(reps)
    shape = tuple(np.shape(g))
    batch = len(shape) - ndim
    split = shape[:batch] + tuple(v for r, n in zip(reps, shape[batch:]) for v in (r, n // r))
    summed = dnp.sum(dnp.reshape(g, split), axis=tuple(range(batch, batch + 2 * ndim, 2)))
    out = shape[:batch] + tuple(x_shape)
    return summed if len(x_shape) == ndim else dnp.reshape(summed, out)


def unpad(g, pad_width):
    """The inner block of a padded array's cotangent (Pad's VJP)."""
    return dnp.getitem(g, tuple(slice(before, n - after)
                                for (before, after), n in zip(pad_width, np.shape(g))))


def cast_back(g, x):
    """`g` cast to x's dtype; None when x is not floating (no gradient into integers, as TF)."""
    dtype = dnp.result_dtype(x)
    if dtype.kind == "f" and dnp.result_dtype(g).kind == "c":
        g = dnp.real(g)  # real -> complex is x -> x + 0i: its transpose keeps the real part
    return dnp.cast(g, dtype) if dtype.kind in "fc" else None


def cast_tangent(dx, dtype):
    """A Cast's output tangent: `dx` cast to `dtype`, or None for a non-floating result."""
    if dtype is not None and np.dtype(dtype).kind == "f" and dnp.result_dtype(dx).kind == "c":
        dx = dnp.real(dx)  # complex -> real keeps the real part, as NumPy's astype (and JAX)
    return dnp.cast(dx, dtype) if dtype is None or np.dtype(dtype).kind in "fc" else None
