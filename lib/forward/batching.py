"""JVPs of one op on a batch of k tangent directions (chunked forward mode).

A batched tangent has shape (k, *x.shape). Elementwise ops and ops declared
`batch_jvp=True` run their rules once on the whole batch (`apply_rules.jvp_output`).
The common linear shape ops get their static arguments shifted past the batch axis
(`sum(axis=0)` becomes `sum(axis=1)`), and MatMul lines its stacks up; every other op
falls back to a loop over the k directions, which is correct for any op.
"""

import numpy as np

from ..core import dnp
from ..core.apply_rules import jvp_output
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE
from ..core.rulekit import normalize_axis


def batched_jvp(op, tangents, ans, values, static, k):
    """The output tangent, shape (k, *ans.shape), from tangents of shape (k, *x.shape)."""
    if op.jvp is None:
        return jvp_output(op, tangents, ans, values, static)  # raises LookupError
    if op.jvp is NOT_DIFFERENTIABLE or all(t is None for t in tangents):
        return None
    if op.elementwise or op.batch_jvp:
        return jvp_output(op, tangents, ans, values, static, batch=k)
    adapter = _ADAPTERS.get(op.name)
    if adapter is not None and (op.jvp is LINEAR or op.name == "MatMul"):
        return adapter(op, tangents, ans, values, static, k)
    return _loop(op, tangents, ans, values, static, k)


def _loop(op, tangents, ans, values, static, k):
    """One JVP per direction, stacked: correct for every op, k times the dispatch cost."""
    parts = []
    for j in range(k):
        tj = [None if t is None else take(t, j, k) for t in tangents]
        part = jvp_output(op, tj, ans, values, static)
        parts.append(part if part is not None else np.zeros(np.shape(ans), dnp.result_dtype(ans)))
    return stack(parts)


def take(t, j, k):
    """Direction j of a batched tangent (differentiable: t may be a tensor or a dual)."""
    if type(t) is np.ndarray:
        return t[j]
    getitem = getattr(dnp, "getitem", None)
    if getitem is not None:
        return getitem(t, j)
    # no getitem op yet: select row j with a one-hot matmul (linear, hence differentiable)
    shape = tuple(dnp.shape(t))[1:]
    onehot = np.zeros(k, dtype=dnp.result_dtype(t))
    onehot[j] = 1
    return dnp.reshape(dnp.matmul(onehot, dnp.reshape(t, (k, -1))), shape)


def stack(parts):
    """Stack k tangents on a new leading axis (differentiable)."""
    if all(type(p) is np.ndarray or isinstance(p, np.generic) for p in parts):
        return np.stack(parts)
    stack_op = getattr(dnp, "stack", None)
    if stack_op is not None:
        return stack_op(parts)
    k = len(parts)
    shape = tuple(dnp.shape(parts[0]))
    total = None
    for j, p in enumerate(parts):
        onehot = np.zeros((k, 1), dtype=dnp.result_dtype(p))
        onehot[j, 0] = 1
        term = dnp.matmul(onehot, dnp.reshape(p, (1, -1)))
        total = term if total is None else total + term
    return dnp.reshape(total, (k,) + shape)


def _zeros_batch(x, k):
    return np.zeros((k,) + tuple(dnp.shape(x)), dtype=dnp.result_dtype(x))


def _shift_axis(axis, ndim):
    if axis is None:
        return tuple(range(1, ndim + 1))
    return tuple(a + 1 for a in normalize_axis(axis, ndim))


def _reduction(op, tangents, ans, values, static, k):
    static = dict(static)
    static["axis"] = _shift_axis(static.get("axis"), np.ndim(values[0]))
    return op(tangents[0], **static)


def _reshape(op, tangents, ans, values, static, k):
    return op(tangents[0], shape=(k,) + tuple(static["shape"]))


def _broadcast_to(op, tangents, ans, values, static, k):
    shape = tuple(static["shape"])
    xshape = tuple(np.shape(values[0]))
    t = dnp.reshape(tangents[0], (k,) + (1,) * (len(shape) - len(xshape)) + xshape)
    return op(t, shape=(k,) + shape)


def _transpose(op, tangents, ans, values, static, k):
    ndim = np.ndim(values[0])
    axes = static.get("axes")
    axes = tuple(range(ndim - 1, -1, -1)) if axes is None else normalize_axis(axes, ndim)
    return op(tangents[0], axes=(0,) + tuple(a + 1 for a in axes))


def _swapaxes(op, tangents, ans, values, static, k):
    ndim = np.ndim(values[0])
    return op(tangents[0], axis1=static["axis1"] % ndim + 1, axis2=static["axis2"] % ndim + 1)


def _matmul(op, tangents, ans, values, static, k):
    # Work on matrices: a vector x is a (1, n) row, a vector y an (n, 1) column, then the
    # batch axis is one more stack axis in front of the broadcast stack axes.
    x, y = values
    xs, ys = tuple(np.shape(x)), tuple(np.shape(y))
    xm = xs if len(xs) >= 2 else (1,) + xs
    ym = ys if len(ys) >= 2 else ys + (1,)
    out_ndim = max(len(xm), len(ym))
    total = None
    dx, dy = tangents
    if dx is not None:
        dxm = dnp.reshape(dx, (k,) + (1,) * (out_ndim - len(xm)) + xm)
        ym_value = y if len(ys) >= 2 else dnp.reshape(y, ym)
        total = dnp.matmul(dxm, ym_value)
    if dy is not None:
        dym = dnp.reshape(dy, (k,) + (1,) * (out_ndim - len(ym)) + ym)
        xm_value = x if len(xs) >= 2 else dnp.reshape(x, xm)
        part = dnp.matmul(xm_value, dym)
        total = part if total is None else total + part
    return dnp.reshape(total, (k,) + tuple(np.shape(ans)))


def adjacent_arrays(index):
    """True when the index arrays sit next to each other (a leading `:` keeps them in place)."""
    at = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    return not at or at[-1] - at[0] == len(at) - 1


def _getitem(op, tangents, ans, values, static, k):
    index = static["index"]
    if not adjacent_arrays(index):
        return _loop(op, tangents, ans, values, static, k)
    return op(tangents[0], index=(slice(None),) + tuple(index))


def _unindex(op, tangents, ans, values, static, k):
    index = static["index"]
    if not adjacent_arrays(index):
        return _loop(op, tangents, ans, values, static, k)
    return op(tangents[0], shape=(k,) + tuple(static["shape"]), index=(slice(None),) + tuple(index))


def _axis_op(ndim_of):
    def adapter(op, tangents, ans, values, static, k):
        static = dict(static)
        ndim = ndim_of(ans, values)
        axis = static.get("axis")
        if axis is None:
            return _loop(op, tangents, ans, values, static, k)
        shifted = tuple(a + 1 for a in normalize_axis(axis, ndim))
        static["axis"] = shifted if isinstance(axis, (tuple, list)) else shifted[0]
        args = [_zeros_batch(v, k) if t is None else t for t, v in zip(tangents, values)]
        return op(*args, **static)
    return adapter


_ADAPTERS = {
    "StridedSlice": _getitem, "StridedSliceGrad": _unindex,
    "ExpandDims": _axis_op(lambda ans, values: np.ndim(ans)),
    "Squeeze": _axis_op(lambda ans, values: np.ndim(values[0])),
    "ConcatV2": _axis_op(lambda ans, values: np.ndim(values[0])),
    "Pack": _axis_op(lambda ans, values: np.ndim(ans)),
    "Cumsum": _axis_op(lambda ans, values: np.ndim(values[0])),
    "Sum": _reduction, "Mean": _reduction, "Reshape": _reshape, "BroadcastTo": _broadcast_to,
    "Transpose": _transpose, "Swapaxes": _swapaxes, "MatMul": _matmul,
}
