"""The runtime helpers of generated code, as numba can compile them (imported only with numba).

Generated adjoint code calls a few helpers of dualtape.transforms.runtime (`unbroadcast`,
`unreduce`, `zeros_like`, ...) that look at their arguments' types at run time. Here each has
a twin that numba specialises at compile time on the argument types (`numba.extending.overload`):
for scalars most of them are the identity, for arrays of one to three axes a sum or a broadcast.
A combination outside what is written here is a typing error that names the helper, reported
by jit/compile.py like any construct numba cannot compile. The compiled module's source calls the
same names (`unbroadcast(...)`), so `df.source` reads like the uncompiled code.

The saved-value stacks have a helper too: `grow(buf)` doubles a preallocated stack
when it is full.
"""

import math

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import overload


def _stub(name):
    def stub(*args):
        raise NotImplementedError(f"{name} is compiled by numba only")
    stub.__name__ = stub.__qualname__ = name
    return stub


unbroadcast = _stub("unbroadcast")
unreduce = _stub("unreduce")
zeros_like = _stub("zeros_like")
owned = _stub("owned")
accumulate = _stub("accumulate")
saved = _stub("saved")
add_at = _stub("add_at")
shape_of = _stub("shape_of")
matmul_cotangent_x = _stub("matmul_cotangent_x")
matmul_cotangent_y = _stub("matmul_cotangent_y")
check_scalar_output = _stub("check_scalar_output")
zero_slot = _stub("zero_slot")
power_slope = _stub("power_slope")
reduced_size = _stub("reduced_size")
broadcast_tangent = _stub("broadcast_tangent")
log_where_positive = _stub("log_where_positive")


def _tuple_len(shape):
    if isinstance(shape, (types.UniTuple, types.Tuple)):
        return len(shape)
    if isinstance(shape, types.BaseTuple):
        return len(shape.types)
    raise TypingError(f"unbroadcast/unreduce: the shape must be a tuple, got {shape}")


@njit
def _sum_to_1(g1, n):
    """A vector summed down to length n (n == its length, or 1)."""
    if g1.shape[0] == n:
        return np.ascontiguousarray(g1)
    out = np.empty(1)
    out[0] = g1.sum()
    return out


@njit
def _sum_to_2(g2, shape):
    """A matrix summed down to `shape` (each axis kept or reduced to 1)."""
    out = np.ascontiguousarray(g2)
    if shape[0] == 1 and out.shape[0] != 1:
        out = out.sum(axis=0).reshape((1, out.shape[1]))
    if shape[1] == 1 and out.shape[1] != 1:
        out = np.ascontiguousarray(out.sum(axis=1)).reshape((out.shape[0], 1))
    return out


@overload(unbroadcast)
def _ov_unbroadcast(g, shape):
    m = _tuple_len(shape)
    if isinstance(g, (types.Number, types.Boolean)):
        if m == 0:
            return lambda g, shape: g
        return lambda g, shape: np.full(shape, g)
    if not isinstance(g, types.Array):
        raise TypingError(f"unbroadcast of a {g} is not compiled (arrays and scalars are)")
    n = g.ndim
    if m == 0:
        return lambda g, shape: g.sum()
    if n == 1 and m == 1:
        return lambda g, shape: _sum_to_1(g, shape[0])
    if n == 2 and m == 1:
        return lambda g, shape: _sum_to_1(g.sum(axis=0), shape[0])
    if n == 2 and m == 2:
        return lambda g, shape: _sum_to_2(g, shape)
    if n == 3 and m == 2:
        return lambda g, shape: _sum_to_2(g.sum(axis=0), shape)
    if n == 3 and m == 1:
        return lambda g, shape: _sum_to_1(g.sum(axis=0).sum(axis=0), shape[0])
    raise TypingError(f"unbroadcast of a {n}-axis array to {m} axes is not compiled (up to 3 axes are)")


@overload(unreduce)
def _ov_unreduce(g, shape, axis=None, keepdims=False):
    m = _tuple_len(shape)
    none_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if none_axis:
        if m == 0:
            return lambda g, shape, axis=None, keepdims=False: g
        if isinstance(g, types.Array):
            return lambda g, shape, axis=None, keepdims=False: np.full(shape, g.sum())
        return lambda g, shape, axis=None, keepdims=False: np.full(shape, g)
    if m == 2 and isinstance(g, types.Array) and isinstance(axis, types.Integer):
        def impl(g, shape, axis=None, keepdims=False):
            out = np.empty(shape)
            flat = g.ravel()
            if axis % 2 == 0:
                for i in range(shape[0]):
                    out[i, :] = flat
            else:
                for j in range(shape[1]):
                    out[:, j] = flat
            return out
        return impl
    if m == 1 and isinstance(axis, types.Integer):
        return lambda g, shape, axis=None, keepdims=False: np.full(shape, np.asarray(g).sum())
    raise TypingError(f"unreduce over axis {axis} of {m} axes is not compiled (axis=None, or one axis of a "
                      "matrix, is)")


@overload(zeros_like)
def _ov_zeros_like(x):
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape)
    if isinstance(x, (types.Number, types.Boolean, types.NoneType, types.Optional)):
        return lambda x: 0.0
    raise TypingError(f"zeros_like of a {x} is not compiled (arrays and scalars are)")


@overload(owned)
def _ov_owned(g):
    if isinstance(g, types.Array):
        return lambda g: g.astype(np.float64)
    raise TypingError(f"owned (an adjoint written in place) of a {g} is not compiled (arrays are)")


@overload(accumulate)
def _ov_accumulate(b, g):
    numeric = (types.Array, types.Number, types.Boolean)
    if isinstance(b, numeric) and isinstance(g, numeric):  # lists' and dicts' adjoints are not compiled
        return lambda b, g: b + g
    raise TypingError(f"accumulate (adjoints that may be lists) of a {b} and a {g} is not compiled (arrays are)")


@overload(saved)
def _ov_saved(v):
    if isinstance(v, (types.Array, types.List)):
        return lambda v: v.copy()
    return lambda v: v


@overload(shape_of)
def _ov_shape_of(x):
    return lambda x: np.shape(x)


@overload(add_at)
def _ov_add_at(b, index, g):
    if not isinstance(b, types.Array):
        raise TypingError(f"add_at into a {b} is not compiled (arrays are)")
    if isinstance(index, types.Array):  # np.add.at: repeated indices add up
        if b.ndim != 1 or index.ndim != 1:
            raise TypingError("add_at with an array index is compiled for vectors only")
        if isinstance(g, types.Array):
            def impl(b, index, g):
                for k in range(index.shape[0]):
                    b[index[k]] += g[k]
                return b
            return impl

        def impl_scalar(b, index, g):
            for k in range(index.shape[0]):
                b[index[k]] += g
            return b
        return impl_scalar

    def impl_basic(b, index, g):
        b[index] += g
        return b
    return impl_basic


@overload(matmul_cotangent_x)
def _ov_matmul_x(g, x, y):
    nx, ny = getattr(x, "ndim", 0), getattr(y, "ndim", 0)
    if nx == 2 and ny == 2:
        return lambda g, x, y: np.ascontiguousarray(g) @ np.ascontiguousarray(y.T)
    if nx == 1 and ny == 2:
        return lambda g, x, y: np.ascontiguousarray(y) @ np.ascontiguousarray(g)
    if nx == 2 and ny == 1:
        return lambda g, x, y: np.outer(g, y)
    if nx == 1 and ny == 1:
        return lambda g, x, y: g * y
    raise TypingError(f"the cotangent of x @ y for x with {nx} and y with {ny} axes is not compiled")


@overload(matmul_cotangent_y)
def _ov_matmul_y(g, x, y):
    nx, ny = getattr(x, "ndim", 0), getattr(y, "ndim", 0)
    if nx == 2 and ny == 2:
        return lambda g, x, y: np.ascontiguousarray(x.T) @ np.ascontiguousarray(g)
    if nx == 1 and ny == 2:
        return lambda g, x, y: np.outer(x, g)
    if nx == 2 and ny == 1:
        return lambda g, x, y: np.ascontiguousarray(x.T) @ np.ascontiguousarray(g)
    if nx == 1 and ny == 1:
        return lambda g, x, y: g * x
    raise TypingError(f"the cotangent of x @ y for x with {nx} and y with {ny} axes is not compiled")


@overload(check_scalar_output)
def _ov_check_scalar_output(value, name):
    if isinstance(value, types.Array) and value.ndim > 0:
        def impl(value, name):
            raise ValueError("[transforms.hvp] f returned an array; a Hessian-vector product needs a scalar output.")
        return impl
    return lambda value, name: None


@overload(power_slope)
def _ov_power_slope(x, y):  # y * x ** (y - 1), 0 where x == y == 0 (rulekit.power_slope)
    if isinstance(x, types.Array) or isinstance(y, types.Array):
        def impl(x, y):
            at_zero = (x == 0) & (y == 0)
            return np.where(at_zero, 0.0, y * np.where(at_zero, 1.0, x) ** (y - 1))
        return impl

    def scalar(x, y):
        return 0.0 * x if x == 0 and y == 0 else y * x ** (y - 1)
    return scalar


@overload(log_where_positive)
def _ov_log_where_positive(x):  # log(x) where x > 0, else 0 (rulekit.log_where_positive: Pow's exponent rule)
    if isinstance(x, types.Array):
        def impl(x):
            positive = x > 0
            return np.where(positive, np.log(np.where(positive, x, 1.0)), 0.0)
        return impl

    def scalar(x):
        return math.log(x) if x > 0 else 0.0 * x
    return scalar


@overload(zero_slot)
def _ov_zero_slot(b, index, x):  # (compiled code holds arrays and numbers: no list items)
    def impl(b, index, x):
        b[index] = 0.0
        return b
    return impl


@overload(reduced_size)
def _ov_reduced_size(shape, axis):  # how many elements fed each output of a reduction (np.mean's VJP)
    n = _tuple_len(shape)
    if n == 0:
        return lambda shape, axis: 1
    if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
        def every(shape, axis):
            size = 1
            for s in shape:
                size *= s
            return size
        return every
    if isinstance(axis, types.Integer):
        return lambda shape, axis: shape[axis % n]
    if isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        def some(shape, axis):
            size = 1
            for a in axis:
                size *= shape[a % n]
            return size
        return some
    raise TypingError(f"reduced_size of axis {axis} is not compiled (None, an int or a tuple of ints are)")


@overload(broadcast_tangent)
def _ov_broadcast_tangent(t, ans):  # a tangent broadcast to the shape of the elementwise result
    if not isinstance(ans, types.Array):
        return lambda t, ans: t
    if isinstance(t, types.Array) and t.ndim == ans.ndim:
        def same_rank(t, ans):
            if t.shape == ans.shape:
                return np.ascontiguousarray(t)
            return np.zeros(ans.shape) + t
        return same_rank
    return lambda t, ans: np.zeros(ans.shape) + t


@njit
def grow(buf):
    """A full preallocated stack, twice as long (its items copied)."""
    bigger = np.empty((2 * buf.shape[0],) + buf.shape[1:], dtype=buf.dtype)
    bigger[:buf.shape[0]] = buf
    return bigger


NAMES = {name: globals()[name] for name in (
    "unbroadcast", "unreduce", "zeros_like", "owned", "accumulate", "saved", "add_at", "shape_of",
    "matmul_cotangent_x", "matmul_cotangent_y", "check_scalar_output", "grow", "power_slope", "reduced_size",
    "broadcast_tangent", "log_where_positive")}
NAMES["zero_slot"] = zero_slot
