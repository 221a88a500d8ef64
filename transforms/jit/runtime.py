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
from numba.np.unsafe.ndarray import to_fixed_tuple

from .stacks import RowsFull


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
reduced_shape = _stub("reduced_shape")
keepdims_shape = _stub("keepdims_shape")
primal_keepdims = _stub("primal_keepdims")
tie_share = _stub("tie_share")
step = _stub("step")
swap_last = _stub("swap_last")
div_no_nan = _stub("div_no_nan")
reshape_like = _stub("reshape_like")
abs_cotangent = _stub("abs_cotangent")
abs_tangent = _stub("abs_tangent")
untranspose = _stub("untranspose")
reduce_max = _stub("reduce_max")
reduce_min = _stub("reduce_min")
reduce_mean = _stub("reduce_mean")
reduce_sum = _stub("reduce_sum")
REDUCTIONS = {"max": (reduce_max, np.max), "min": (reduce_min, np.min), "mean": (reduce_mean, np.mean),
              "sum": (reduce_sum, np.sum)}
KEPT = {name: _stub(f"reduce_{name}_kept") for name in REDUCTIONS}  # the same with keepdims=True


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


@njit
def _sum_to_3(g3, shape):
    """A 3-axis array summed down to `shape` (each axis kept or reduced to 1)."""
    out = np.ascontiguousarray(g3)
    if shape[0] == 1 and out.shape[0] != 1:
        out = np.ascontiguousarray(out.sum(axis=0)).reshape((1, out.shape[1], out.shape[2]))
    if shape[1] == 1 and out.shape[1] != 1:
        out = np.ascontiguousarray(out.sum(axis=1)).reshape((out.shape[0], 1, out.shape[2]))
    if shape[2] == 1 and out.shape[2] != 1:
        out = np.ascontiguousarray(out.sum(axis=2)).reshape((out.shape[0], out.shape[1], 1))
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
    if n == 3 and m == 3:
        return lambda g, shape: _sum_to_3(g, shape)
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


def _none(axis):
    return axis is None or isinstance(axis, (types.NoneType, types.Omitted))


@overload(reduced_shape)
def _ov_reduced_shape(shape, axis):  # the shape of a keepdims=True reduction over axis (rulekit.reduced_shape)
    n = _tuple_len(shape)
    if n == 0:
        return lambda shape, axis: ()
    if _none(axis):
        def every(shape, axis):
            return to_fixed_tuple(np.ones(n, np.int64), n)
        return every
    if isinstance(axis, types.Integer):
        def one(shape, axis):
            out = np.empty(n, np.int64)
            for i in range(n):
                out[i] = shape[i]
            out[axis % n] = 1
            return to_fixed_tuple(out, n)
        return one
    if isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        def some(shape, axis):
            out = np.empty(n, np.int64)
            for i in range(n):
                out[i] = shape[i]
            for a in axis:
                out[a % n] = 1
            return to_fixed_tuple(out, n)
        return some
    raise TypingError(f"reduced_shape of axis {axis} is not compiled (None, an int or a tuple of ints are)")


@overload(keepdims_shape)
def _ov_keepdims_shape(g, shape, axis=None, keepdims=False):  # (rulekit.keepdims_shape; no batch axes here)
    # whatever `keepdims` was, the keepdims shape has the input's axes: reshape to it (a no-op when kept)
    if _tuple_len(shape) == 0 or (isinstance(g, types.Array) and g.ndim == _tuple_len(shape)):
        return lambda g, shape, axis=None, keepdims=False: g  # (keepdims=True, or a reduction of a number)
    return lambda g, shape, axis=None, keepdims=False: np.reshape(
        np.ascontiguousarray(np.asarray(g)), reduced_shape(shape, axis))


@overload(primal_keepdims)
def _ov_primal_keepdims(ans, shape, axis=None, keepdims=False):  # (rulekit.primal_keepdims)
    if _tuple_len(shape) == 0 or (isinstance(ans, types.Array) and ans.ndim == _tuple_len(shape)):
        return lambda ans, shape, axis=None, keepdims=False: ans
    return lambda ans, shape, axis=None, keepdims=False: np.reshape(
        np.ascontiguousarray(np.asarray(ans)), reduced_shape(shape, axis))


@overload(tie_share)
def _ov_tie_share(x, ans, axis=None, keepdims=False):  # 1 / ties where x is its extreme ans, else 0 (rulekit)
    if not isinstance(x, types.Array):
        return lambda x, ans, axis=None, keepdims=False: 1.0
    n = x.ndim
    if _none(axis):
        def every(x, ans, axis=None, keepdims=False):
            mask = (x == np.asarray(ans).sum()).astype(np.float64)  # (ans: one number, maybe a 1-element array)
            return mask / mask.sum()
        return every
    if isinstance(axis, types.Integer):
        def one(x, ans, axis=None, keepdims=False):
            mask = (x == primal_keepdims(ans, x.shape, axis, keepdims)).astype(np.float64)
            return mask / np.reshape(np.ascontiguousarray(mask.sum(axis=axis % n)), reduced_shape(x.shape, axis))
        return one
    raise TypingError(f"tie_share over axis {axis} is not compiled (None or one int axis are)")


@overload(step)
def _ov_step(x):  # 1 where x > 0, else 0: relu's derivative (rulekit.step)
    return lambda x: x > 0


@overload(swap_last)
def _ov_swap_last(x):  # the transpose of a matrix (rulekit.swap_last)
    if isinstance(x, types.Array) and x.ndim == 2:
        return lambda x: x.T
    if isinstance(x, types.Array) and x.ndim >= 2:
        raise TypingError("swap_last of a stack of matrices is not compiled (a matrix is)")
    return lambda x: x


@overload(div_no_nan)
def _ov_div_no_nan(x, y):  # x / y, 0 where y == 0 (rulekit.div_no_nan)
    if isinstance(x, types.Array) or isinstance(y, types.Array):
        def impl(x, y):
            zero = y == 0
            return np.where(zero, 0.0, x / np.where(zero, 1.0, y))
        return impl
    return lambda x, y: 0.0 * x if y == 0 else x / y


@overload(reshape_like)
def _ov_reshape_like(g, x):  # g reshaped to x's shape (rulekit.reshape_like; no batch axes here)
    if not isinstance(x, types.Array):
        if isinstance(g, types.Array):
            return lambda g, x: g.sum()  # (one element)
        return lambda g, x: g
    if not isinstance(g, types.Array):
        return lambda g, x: np.full(x.shape, g)
    return lambda g, x: np.reshape(np.ascontiguousarray(g), x.shape)


@overload(untranspose)
def _ov_untranspose(g, axes):  # undo transpose(x, axes) (rulekit.untranspose; no batch axes here)
    if not isinstance(g, types.Array):
        return lambda g, axes: g
    if _none(axes):
        return lambda g, axes: g.T
    n = g.ndim
    if isinstance(axes, types.UniTuple) and isinstance(axes.dtype, types.Integer) and len(axes) == n:
        def impl(g, axes):
            inverse = np.empty(n, np.int64)
            for i in range(n):
                inverse[axes[i] % n] = i
            return np.transpose(g, to_fixed_tuple(inverse, n))
        return impl
    raise TypingError(f"untranspose with axes {axes} is not compiled (None or a tuple of ints are)")


@overload(abs_cotangent)
def _ov_abs_cotangent(g, x, ans):  # g sign(x) on reals (rulekit.abs_cotangent; compiled code is real)
    return lambda g, x, ans: g * np.sign(x)


@overload(abs_tangent)
def _ov_abs_tangent(dx, x, ans):  # dx sign(x) on reals (rulekit.abs_tangent)
    return lambda dx, x, ans: dx * np.sign(x)


def _reduction_over(combine, whole, mean=False):
    """The twin of np.<reduction>(x, axis) for one int axis (jit/reductions.py): x seen as
    (outer, k, inner) around the axis, each of the outer * inner results folded from k values."""
    def typer(x, axis):
        if _none(axis):
            return lambda x, axis: whole(x)
        if not isinstance(x, types.Array):
            raise TypingError(f"a reduction over an axis of a {x} is not compiled (of an array is)")
        if not isinstance(axis, types.Integer):
            raise TypingError(f"a reduction over axis {axis} is not compiled (over one int axis is)")
        n, rank = x.ndim, max(x.ndim - 1, 1)

        def impl(x, axis):
            a = axis % n
            outer, inner = 1, 1
            for i in range(a):
                outer *= x.shape[i]
            for i in range(a + 1, n):
                inner *= x.shape[i]
            k = x.shape[a]
            if k == 0 and not mean:
                raise ValueError("zero-size array to reduction operation which has no identity")
            x3 = np.ascontiguousarray(x).reshape((outer, k, inner))
            out = np.empty((outer, inner), dtype=np.float64 if mean else x.dtype)
            for i in range(outer):
                for j in range(inner):
                    out[i, j] = combine(x3[i, :, j])
            if mean:
                out = out / k
            shape = np.ones(rank, np.int64)  # (a vector's: (1,), its one number taken below)
            m = 0
            for i in range(n):
                if i != a:
                    shape[m] = x.shape[i]
                    m += 1
            return out.reshape(to_fixed_tuple(shape, rank))
        if n == 1:  # (a vector reduced over its axis is one number)
            reduce = njit(impl)
            return lambda x, axis: reduce(x, axis)[0]
        return impl
    return typer


@njit
def _fold_max(v):
    best = v[0]
    for t in v[1:]:
        if t > best or t != t:  # (NaN propagates, as np.max)
            best = t
            if t != t:
                break
    return best


@njit
def _fold_min(v):
    best = v[0]
    for t in v[1:]:
        if t < best or t != t:
            best = t
            if t != t:
                break
    return best


@njit
def _fold_sum(v):
    return v.sum()


overload(reduce_max)(_reduction_over(_fold_max, np.max))
overload(reduce_min)(_reduction_over(_fold_min, np.min))
overload(reduce_mean)(_reduction_over(_fold_sum, np.mean, mean=True))


@overload(reduce_sum)
def _ov_reduce_sum(x, axis):  # numba's np.sum over one int axis, else the loop's
    if _none(axis):
        return lambda x, axis: np.sum(x)
    if isinstance(x, types.Array) and isinstance(axis, types.Integer):
        return lambda x, axis: np.sum(x, axis=axis)
    raise TypingError(f"np.sum over axis {axis} of a {x} is not compiled (over one int axis of an array is)")


def _kept(reduce):
    """The twin of np.<reduction>(x, axis, keepdims=True): the reduction, its axes kept as length 1."""
    def typer(x, axis):
        if not isinstance(x, types.Array):
            return lambda x, axis: x
        return lambda x, axis: np.reshape(np.ascontiguousarray(np.asarray(reduce(x, axis))),
                                          reduced_shape(x.shape, axis))
    return typer


for _name, (_reduce, _) in REDUCTIONS.items():
    overload(KEPT[_name])(_kept(_reduce))


@njit
def grow(buf):
    """A full preallocated stack (C-contiguous), twice as long (its items copied). The copy is a
    loop over the flat items: numba takes seconds to compile `bigger[:n] = buf`."""
    bigger = np.empty((2 * buf.shape[0],) + buf.shape[1:], dtype=buf.dtype)
    to, items = bigger.reshape(bigger.size), buf.reshape(buf.size)
    for i in range(items.shape[0]):
        to[i] = items[i]
    return bigger


NAMES = {name: globals()[name] for name in (
    "unbroadcast", "unreduce", "zeros_like", "owned", "accumulate", "saved", "add_at", "shape_of",
    "matmul_cotangent_x", "matmul_cotangent_y", "check_scalar_output", "grow", "power_slope", "reduced_size",
    "broadcast_tangent", "log_where_positive", "reduced_shape", "keepdims_shape", "primal_keepdims", "tie_share",
    "step", "swap_last", "div_no_nan", "reshape_like", "abs_cotangent", "abs_tangent", "untranspose",
    "reduce_max", "reduce_min", "reduce_mean", "reduce_sum")}
NAMES.update({stub.__name__: stub for stub in KEPT.values()})
NAMES["zero_slot"] = zero_slot
NAMES["RowsFull"] = RowsFull  # (raised where a rows stack is full: jit/stacks.py)
