"""rulekit, NumPy's further functions: the pieces of the rules of `ops.assembly`
and `ops.statistics` (stacking, diagonals, kron, diff, sorting, quantiles, convolution).
See `rulekit`. Each helper calls `dnp` on the cotangent or tangent, so an outer tape records
it; indices and weights come from the primal values (`primal_of`), constants of the rule."""

import numpy as np

from .. import dnp
from ..duck import primal_of as plain_under
from ..traced import Traced

__all__ = ["primal_of", "stacked_shape", "stack_axis", "stack_piece", "append_piece", "diagonal_index",
           "undiag", "undiagflat", "rollaxis_inverse", "kron_vjp", "undiff", "ungradient", "along_axis_index",
           "sort_index", "quantile_jvp", "quantile_vjp", "convolve_vjp", "interp_slope", "interp_weights",
           "matrix_power_vjp", "matrix_power_jvp", "average_weights", "unaverage_weights", "put_winners"]


def primal_of(x):
    """The plain NumPy value under a tensor or dual number (nested ones included); a vmap's
    batched value stays batched (core/duck.py)."""
    x = plain_under(x)
    return x if isinstance(x, Traced) else np.asarray(x)


_STACK_AXIS = {"hstack": 1, "vstack": 0, "row_stack": 0, "dstack": 2, "column_stack": 1}


def stacked_shape(shape, kind):
    """The shape one input takes inside np.hstack / vstack / dstack / column_stack."""
    if kind in ("vstack", "row_stack"):
        return shape if len(shape) >= 2 else (1,) + shape if len(shape) == 1 else (1, 1)
    if kind == "dstack":
        return (shape if len(shape) >= 3 else (1,) + shape + (1,) if len(shape) == 1
                else shape + (1,) if len(shape) == 2 else (1, 1, 1))
    if kind == "column_stack" and len(shape) < 2:
        return (max(int(np.prod(shape)), 1), 1)
    return shape if len(shape) >= 1 else (1,)


def stack_axis(kind, ndim):
    """The axis np.<kind> concatenates along, for inputs of `ndim` after promotion."""
    return 0 if kind == "hstack" and ndim == 1 else _STACK_AXIS[kind]


def stack_piece(g, arrays, argnum, kind):
    """The part of np.<kind>(arrays)'s cotangent from input `argnum`, in that input's shape."""
    shapes = [stacked_shape(tuple(np.shape(a)), kind) for a in arrays]
    axis = stack_axis(kind, len(shapes[0]))
    start = sum(s[axis] for s in shapes[:argnum])
    key = (slice(None),) * axis + (slice(start, start + shapes[argnum][axis]),)
    return dnp.reshape(dnp.getitem(g, key), tuple(np.shape(arrays[argnum])))


def append_piece(g, arr, values, argnum, axis):
    """The cotangent of np.append(arr, values, axis)'s input `argnum` (0: arr, 1: values)."""
    if axis is None:
        n = int(np.prod(np.shape(arr)))
        flat = dnp.getitem(g, slice(0, n) if argnum == 0 else slice(n, None))
        return dnp.reshape(flat, tuple(np.shape(arr if argnum == 0 else values)))
    axis = axis % len(np.shape(g))
    n = np.shape(arr)[axis]
    key = (slice(None),) * axis + (slice(0, n) if argnum == 0 else slice(n, None),)
    return dnp.getitem(g, key)


def diagonal_index(shape, k):
    """(rows, cols) of the k-th diagonal of a matrix of `shape` (empty when it is outside)."""
    rows, cols = shape
    length = max(0, min(rows - max(-k, 0), cols - max(k, 0)))
    return np.arange(length) + max(-k, 0), np.arange(length) + max(k, 0)


def undiag(g, x, k):
    """np.diag's VJP: the k-th diagonal of `g` (x a vector), or `g` put on it (x a matrix)."""
    if len(np.shape(x)) == 1:
        return dnp.getitem(g, diagonal_index(np.shape(g), k))
    return dnp.unindex(g, tuple(np.shape(x)), diagonal_index(np.shape(x), k))


def undiagflat(g, x, k):
    """np.diagflat's VJP: the k-th diagonal of `g`, shaped like `x`."""
    return dnp.reshape(dnp.getitem(g, diagonal_index(np.shape(g), k)), tuple(np.shape(x)))


def rollaxis_inverse(ndim, axis, start):
    """The permutation undoing np.rollaxis(., axis, start) on an array of `ndim` axes."""
    probe = np.broadcast_to(np.empty(()), tuple(range(1, ndim + 1)))
    order = [n - 1 for n in np.shape(np.rollaxis(probe, axis, start))]
    return tuple(int(i) for i in np.argsort(order))


def kron_vjp(g, a, b, argnum):
    """Cotangent of np.kron(a, b)'s input `argnum`: g read as blocks, weighted by the other."""
    nd = max(len(np.shape(a)), len(np.shape(b)))
    sa = (1,) * (nd - len(np.shape(a))) + tuple(np.shape(a))
    sb = (1,) * (nd - len(np.shape(b))) + tuple(np.shape(b))
    blocks = dnp.reshape(g, tuple(v for pair in zip(sa, sb) for v in pair))
    if argnum == 0:
        other = dnp.reshape(b, tuple(v for n in sb for v in (1, n)))
        return dnp.reshape(dnp.sum(blocks * other, axis=tuple(range(1, 2 * nd, 2))), tuple(np.shape(a)))
    other = dnp.reshape(a, tuple(v for n in sa for v in (n, 1)))
    return dnp.reshape(dnp.sum(blocks * other, axis=tuple(range(0, 2 * nd, 2))), tuple(np.shape(b)))


def ungradient(g, axis, edge_order, spacing):
    """np.gradient's VJP along one axis: the transpose of its (n, n) matrix of differences (central
    inside, one-sided of `edge_order` at the ends), which is np.gradient of the identity."""
    if not isinstance(axis, (int, np.integer)):  # the transformer binds np.gradient(x)'s axis=None here
        raise TypeError(f"[Gradient] the derivative of np.gradient is taken one axis at a time, got axis={axis!r}. "
                        "Fix: call np.gradient(x, axis=0), np.gradient(x, axis=1), ... in dualtape.transforms; "
                        "several axes at once run on the tape, in dual numbers and in the functional API.")
    n = np.shape(g)[axis]
    matrix = np.gradient(np.eye(n, dtype=dnp.result_dtype(g)), spacing, axis=0, edge_order=edge_order)
    return dnp.moveaxis(dnp.matmul(dnp.moveaxis(g, axis, -1), matrix), -1, axis)  # g D along the axis


def undiff(g, n, axis):
    """np.diff's VJP: the transposed forward difference, `n` times (g[i-1] - g[i], zero-padded)."""
    for _ in range(n):
        ndim = len(np.shape(g))
        widths = tuple((1, 1) if i == axis % ndim else (0, 0) for i in range(ndim))
        g = -dnp.diff(dnp.pad(g, widths), axis=axis)
    return g


def along_axis_index(indices, axis, shape):
    """The fancy index that np.take_along_axis(., indices, axis) applies to an array of `shape`."""
    indices = primal_of(indices)
    if axis is None:  # (negative indices count from the end, as NumPy's)
        return np.unravel_index(np.mod(indices, max(int(np.prod(shape)), 1)), shape)
    # the other axes range over the array's own (NumPy's _make_along_axis_idx): indices of
    # length 1 there broadcast against them
    grid = list(np.ix_(*[np.arange(n) for n in shape]))
    grid[axis % len(shape)] = indices
    return tuple(grid)


def put_winners(indices, axis, out):
    """1.0 where an entry written by np.put_along_axis(a, indices, values, axis) (giving `out`)
    is the one that stays: the last write to its position, as NumPy's assignment keeps it."""
    shape = tuple(np.shape(out))
    full = np.broadcast_arrays(*along_axis_index(indices, axis, shape))
    target = np.ravel_multi_index(tuple(full), shape, mode="wrap") if shape else np.zeros(full[0].shape, int)
    order = np.arange(target.size).reshape(target.shape)
    last = np.full(max(int(np.prod(shape)), 1), -1)
    np.maximum.at(last, target.ravel(), order.ravel())
    return (last[target] == order).astype(dnp.result_dtype(out))


def sort_index(x, axis=-1, kth=None):
    """The fancy index putting `x` in sorted order along `axis` (stable: ties keep their order),
    or in np.partition's order around `kth`; axis None sorts the flattened array."""
    p = primal_of(x)
    if axis is None:
        order = np.argsort(p, axis=None, kind="stable") if kth is None else np.argpartition(p, kth, axis=None)
        return np.unravel_index(order, np.shape(p))
    order = np.argsort(p, axis=axis, kind="stable") if kth is None else np.argpartition(p, kth, axis=axis)
    return along_axis_index(order, axis, np.shape(p))


def _quantile_weights(n, q, method="linear"):
    """(len(q), n) weights: row j mixes the two sorted entries around quantile q[j]. Every NumPy
    method is such a mix, at a position that depends on n and q only: NumPy's own quantile of
    0, 1, ..., n-1 ('lower' gives whole positions, 'midpoint' halves, 'linear' q (n - 1))."""
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    position = q * (n - 1) if method == "linear" else np.atleast_1d(
        np.quantile(np.arange(n, dtype=np.float64), q, method=method))
    low = np.clip(np.floor(position).astype(np.int64), 0, n - 1)
    high = np.minimum(low + 1, n - 1)
    frac = position - low
    weights = np.zeros((q.size, n))
    np.add.at(weights, (np.arange(q.size), low), 1 - frac)
    np.add.at(weights, (np.arange(q.size), high), frac)
    return weights


def _sorted_last(v, x, axis):
    """`v` (shaped like x) in x's sorted order, the sorted axis moved last (flattened: axis None)."""
    s = dnp.getitem(v, sort_index(x, axis))
    return s if axis is None else dnp.moveaxis(s, axis, -1)


def quantile_jvp(dx, x, q, axis, keepdims, method="linear"):
    """np.quantile's tangent: the same mix of the sorted tangents as of the sorted values."""
    s = _sorted_last(dx, x, axis)
    w = _quantile_weights(np.shape(s)[-1], q, method).astype(dnp.result_dtype(dx))
    out = dnp.einsum("...n,qn->q...", s, w)
    shape = np.shape(np.quantile(np.zeros(np.shape(x)), q, axis=axis, keepdims=keepdims))
    return dnp.reshape(out, shape)


def quantile_vjp(g, x, q, axis, keepdims, method="linear"):
    """np.quantile's VJP: g spread on the sorted entries each quantile mixes, then unsorted."""
    shape = tuple(np.shape(x))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    w = _quantile_weights(n, q, method).astype(dnp.result_dtype(g))
    rest = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis % len(shape))
    spread = dnp.einsum("q...,qn->...n", dnp.reshape(g, (w.shape[0],) + rest), w)
    if axis is not None:
        spread = dnp.moveaxis(spread, -1, axis)
    return dnp.unindex(spread, shape, sort_index(x, axis))


def _mode_start(n, m, mode, correlate):
    """Where np.convolve / np.correlate's `mode` window starts inside its full output (NumPy
    swaps the inputs when the second is longer, which moves the 'same' window)."""
    rng = np.random.default_rng(0)
    pa, pv = rng.standard_normal(n), rng.standard_normal(m)
    fn = np.correlate if correlate else np.convolve
    full, out = fn(pa, pv, "full"), fn(pa, pv, mode)
    return next(s for s in range(len(full) - len(out) + 1) if np.allclose(full[s:s + len(out)], out))


def convolve_vjp(g, a, v, mode, argnum, correlate=False):
    """Cotangent of np.convolve(a, v, mode)'s input `argnum`: the full-mode cotangent
    (g placed where `mode` cut it) correlated with the other input. correlate=True: the
    window is np.correlate's (v is then the flipped second input of the correlation)."""
    n, m = np.shape(a)[0], np.shape(v)[0]
    start = _mode_start(n, m, mode, correlate)
    full = dnp.pad(g, ((start, n + m - 1 - start - np.shape(g)[0]),))
    other = v if argnum == 0 else a
    if dnp.result_dtype(other).kind == "c":  # np.correlate would conjugate it: convolve, flipped
        return dnp.convolve(full, other[::-1], mode="valid")
    return dnp.correlate(full, other, mode="valid")


def interp_weights(x, xp):
    """(len(xp), *x.shape) weights W with np.interp(x, xp, fp) = tensordot(fp, W, 1): the two
    knots around each x get 1 - t and t, t differentiable in x (constant outside the knots)."""
    xp_, p = primal_of(xp), primal_of(x)
    dtype = dnp.result_dtype(x)
    k = np.clip(np.searchsorted(xp_, p, side="right") - 1, 0, len(xp_) - 2)
    inside = (p >= xp_[0]) & (p <= xp_[-1])
    t = dnp.where(inside, (x - xp_[k].astype(dtype)) / (xp_[k + 1] - xp_[k]).astype(dtype),
                  (p > xp_[-1]).astype(dtype))
    rows = np.arange(len(xp_)).reshape((-1,) + (1,) * p.ndim)
    return (rows == k).astype(dtype) * (1 - t) + (rows == k + 1).astype(dtype) * t


def matrix_power_vjp(g, a, n):
    """np.linalg.matrix_power's VJP: sum over k of (A^T)^k g (A^T)^(n-1-k); for n < 0, that
    of B = inv(A) to the power -n, pulled back through dB = -B dA B."""
    if n < 0:
        b = dnp.linalg_inv(a)
        bt = dnp.swapaxes(b, -1, -2)
        return -dnp.matmul(dnp.matmul(bt, matrix_power_vjp(g, b, -n)), bt)
    at = dnp.swapaxes(a, -1, -2)
    total = dnp.zeros_like(g)
    for k in range(n):
        total = total + dnp.matmul(dnp.matmul(dnp.matrix_power(at, k), g), dnp.matrix_power(at, n - 1 - k))
    return total


def matrix_power_jvp(da, a, n):
    """np.linalg.matrix_power's tangent: sum over k of A^k dA A^(n-1-k) (n < 0: through inv)."""
    if n < 0:
        b = dnp.linalg_inv(a)
        return matrix_power_jvp(-dnp.matmul(dnp.matmul(b, da), b), b, -n)
    total = dnp.zeros_like(da)
    for k in range(n):
        total = total + dnp.matmul(dnp.matmul(dnp.matrix_power(a, k), da), dnp.matrix_power(a, n - 1 - k))
    return total


def average_weights(a, w, axis):
    """np.average's weights broadcast to a's shape (ones when None; a 1-d w runs along axis)."""
    if w is None:
        return np.ones(np.shape(a), dtype=dnp.result_dtype(a))
    if len(np.shape(w)) == 1 and len(np.shape(a)) > 1 and axis is not None:
        shape = [1] * len(np.shape(a))
        shape[axis % len(shape)] = np.shape(w)[0]
        w = dnp.reshape(w, tuple(shape))
    return dnp.broadcast_to(w, tuple(np.shape(a)))


def unaverage_weights(gw, a, w, axis):
    """A cotangent for the broadcast weights, summed back to the shape of the given `w`."""
    if len(np.shape(w)) == 1 and len(np.shape(a)) > 1 and axis is not None:
        ax = axis % len(np.shape(a))
        return dnp.sum(gw, axis=tuple(i for i in range(len(np.shape(a))) if i != ax))
    return gw


def interp_slope(x, xp, fp):
    """The slope of np.interp at x, as a function of fp: that of the segment [xp[i], xp[i+1])
    holding x (at a knot: the segment to its right), 0 outside [xp[0], xp[-1]]."""
    xp_, p = primal_of(xp), primal_of(x)
    i = np.clip(np.searchsorted(xp_, p, side="right") - 1, 0, len(xp_) - 2)
    inside = ((p >= xp_[0]) & (p <= xp_[-1])).astype(dnp.result_dtype(fp))
    return (dnp.getitem(fp, i + 1) - dnp.getitem(fp, i)) * (inside / (xp_[i + 1] - xp_[i]))
