"""TF-named functions (`reduce_mean`, `concat`, `clip_by_norm`, ...) over `dnp`.

Arguments are converted with TF's rules first (Python floats become float32), then the
call goes to the differentiable NumPy namespace. `dualtape.math`, `dualtape.nn`,
`dualtape.linalg` and the top level re-export these under TF's names.
"""

import numpy as np

from ..core import dtypes
from ..core import dnp, nest
from ..core.registry import Traced
from ..reverse.tensor import Tensor, TensorShape, convert_to_tensor, plain_value, wrap
from ..custom.gradient import stop_gradient  # noqa: F401  (one definition, the lower floor's; TF's name here)
from ..functional.vectorize import vmap


def to_tensor(x, dtype=None):
    """A tensor (or traced value) for `x`, converted with TF's dtype rules."""
    if isinstance(x, Traced):
        return x
    if isinstance(x, TensorShape):
        x = list(x)
    return convert_to_tensor(x, dtype=dtype)


def _pair(x, y):
    """Convert two operands, the Python one taking the tensor's dtype, as TF's binary ops.

    A Python number next to a float NumPy array takes the array's dtype too, so
    `add(1.001, float64 array)` is not rounded through float32.
    """
    if isinstance(x, Traced) and not isinstance(y, Traced):
        return x, to_tensor(y, dnp.result_dtype(x))
    if isinstance(y, Traced) and not isinstance(x, Traced):
        return to_tensor(x, dnp.result_dtype(y)), y
    if isinstance(y, _ARRAYS) and isinstance(x, _PYTHON_NUMBERS) and y.dtype.kind == "f":
        return to_tensor(x, y.dtype), to_tensor(y)
    if isinstance(x, _ARRAYS) and isinstance(y, _PYTHON_NUMBERS) and x.dtype.kind == "f":
        return to_tensor(x), to_tensor(y, x.dtype)
    return to_tensor(x), to_tensor(y)


_ARRAYS = (np.ndarray, np.generic)
_PYTHON_NUMBERS = (int, float)


def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.numpy()
    if isinstance(axis, (list, tuple, np.ndarray)):
        return tuple(int(a) for a in np.ravel(axis))
    return int(axis)


def output_tensor(x):
    return x if isinstance(x, Traced) else wrap(np.asarray(x))


# -- elementwise ------------------------------------------------------------------------------
def _unary(fn):
    def op(x, name=None):
        return output_tensor(fn(to_tensor(x)))
    op.__name__ = getattr(fn, "__name__", None) or getattr(fn, "name", "op")
    op.__doc__ = f"Elementwise {op.__name__} of a tensor (TF name)."
    return op


def _binary(fn):
    def op(x, y, name=None):
        return output_tensor(fn(*_pair(x, y)))
    op.__doc__ = "Elementwise binary op with TF's conversion of Python operands."
    return op


abs = _unary(dnp.abs)  # noqa: A001
negative = neg = _unary(dnp.negative)
sign = _unary(dnp.sign)
exp = _unary(dnp.exp)
log = _unary(dnp.log)
log1p = _unary(dnp.log1p)
expm1 = _unary(dnp.expm1)
sqrt = _unary(dnp.sqrt)
square = _unary(dnp.square)
reciprocal = _unary(dnp.reciprocal)
sin = _unary(dnp.sin)
cos = _unary(dnp.cos)
tan = _unary(dnp.tan)
asin = _unary(dnp.arcsin)
acos = _unary(dnp.arccos)
atan = _unary(dnp.arctan)
sinh = _unary(dnp.sinh)
cosh = _unary(dnp.cosh)
tanh = _unary(dnp.tanh)
sigmoid = _unary(dnp.sigmoid)
relu = _unary(dnp.relu)
elu = _unary(dnp.elu)
softplus = _unary(dnp.softplus)
round = _unary(dnp.round)  # noqa: A001
floor = _unary(dnp.floor)
ceil = _unary(dnp.ceil)
identity = _unary(dnp.identity)
logical_not = _unary(dnp.logical_not)
is_finite = _unary(dnp.isfinite)
is_nan = _unary(dnp.isnan)

add = _binary(dnp.add)
subtract = _binary(dnp.subtract)
multiply = _binary(dnp.multiply)
divide = truediv = _binary(dnp.divide)
floordiv = floor_divide = _binary(dnp.floor_divide)
floormod = mod = _binary(dnp.mod)
pow = _binary(dnp.power)  # noqa: A001
maximum = _binary(dnp.maximum)
minimum = _binary(dnp.minimum)
atan2 = _binary(dnp.arctan2)
greater = _binary(dnp.greater)
greater_equal = _binary(dnp.greater_equal)
less = _binary(dnp.less)
less_equal = _binary(dnp.less_equal)
equal = _binary(dnp.equal)
not_equal = _binary(dnp.not_equal)
logical_and = _binary(dnp.logical_and)
logical_or = _binary(dnp.logical_or)


def where(condition, x=None, y=None, name=None):
    """Elements of x where condition holds, else of y (gradients masked accordingly)."""
    if x is None and y is None:
        return wrap(np.argwhere(plain_value(condition)).astype(np.int64))
    x, y = _pair(x, y)
    return output_tensor(dnp.where(to_tensor(condition), x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    t = to_tensor(t)
    return output_tensor(dnp.clip(t, *(to_tensor(v, t.dtype) for v in (clip_value_min, clip_value_max))))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t), clip_norm): the norm of the result is at most clip_norm."""
    t = to_tensor(t)
    l2 = dnp.sqrt(dnp.sum(dnp.square(t), axis=_axis(axes), keepdims=True))
    clip_norm = to_tensor(clip_norm, t.dtype)
    return output_tensor(t * clip_norm / dnp.maximum(l2, clip_norm))


def global_norm(t_list, name=None):
    """sqrt(sum of the squares of every entry of every tensor in t_list); None entries are
    skipped (tf.linalg.global_norm: twice the sum of the l2_loss of each, square-rooted)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    halves = [dnp.sum(dnp.square(t)) / 2 for t in (_dense(t) for t in t_list) if t is not None]
    if not halves:
        raise ValueError("[global_norm] t_list holds no tensor (every entry is None).")
    return output_tensor(dnp.sqrt(dnp.sum(dnp.stack(halves)) * 2))


def _dense(t):
    if t is None:
        return None
    dense = getattr(t, "_dense", None)  # an IndexedSlices (the gradient of a gather)
    return dense() if dense is not None and not isinstance(t, Tensor) else to_tensor(t)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scale every tensor of `t_list` by clip_norm / max(global_norm, clip_norm), so their
    global norm is at most clip_norm; returns (clipped list, global norm), as TF. None
    entries stay None; an infinite norm gives NaNs, as TF (scale + (norm - norm))."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    norm = global_norm(t_list) if use_norm is None else to_tensor(use_norm)
    clip = to_tensor(clip_norm, dnp.result_dtype(norm))
    one = to_tensor(1.0, dnp.result_dtype(norm))
    scale = clip * dnp.minimum(one / norm, one / clip)
    with np.errstate(invalid="ignore"):  # inf - inf: the NaN TF means to give
        scale = scale + (norm - norm)
    clipped = [None if t is None else output_tensor(t * dnp.cast(scale, dnp.result_dtype(t)))
               for t in (_dense(t) for t in t_list)]
    return clipped, norm


def cast(x, dtype, name=None):
    return output_tensor(dnp.cast(to_tensor(x), dtypes.as_numpy_dtype(dtype)))


# -- reductions ----------------------------------------------------------------------------------
def _reduction(fn, keeps_integer_dtype=False):
    def op(input_tensor, axis=None, keepdims=False, name=None):
        x = to_tensor(input_tensor)
        result = fn(x, axis=_axis(axis), keepdims=keepdims)
        return output_tensor(_keep_integer_dtype(result, x) if keeps_integer_dtype else result)
    op.__doc__ = "Reduce over `axis` (all axes by default), as TF's reduce_* functions."
    return op


def _keep_integer_dtype(result, x):
    """TF's integer sums, products and means keep the input's dtype (`tf.reduce_prod(v.shape)`
    is int32), where NumPy's widen int32 to int64 and take a float mean; TF's integer mean
    truncates toward zero, as the cast does."""
    dtype = dnp.result_dtype(x)
    if dtype.kind in "iu" and dnp.result_dtype(result) != dtype:
        return dnp.cast(result, dtype)
    return result


reduce_sum = _reduction(lambda x, **kw: dnp.sum(x, **kw), keeps_integer_dtype=True)
reduce_mean = _reduction(lambda x, **kw: dnp.mean(x, **kw), keeps_integer_dtype=True)
reduce_prod = _reduction(lambda x, **kw: dnp.prod(x, **kw), keeps_integer_dtype=True)
reduce_max = _reduction(lambda x, **kw: dnp.max(x, **kw))
reduce_min = _reduction(lambda x, **kw: dnp.min(x, **kw))
reduce_any = _reduction(lambda x, **kw: dnp.any(x, **kw))
reduce_all = _reduction(lambda x, **kw: dnp.all(x, **kw))
reduce_logsumexp = _reduction(lambda x, **kw: dnp.logsumexp(x, **kw))
reduce_variance = _reduction(lambda x, **kw: dnp.var(x, **kw))
reduce_std = _reduction(lambda x, **kw: dnp.std(x, **kw))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    x = to_tensor(x)
    result = dnp.cumsum(x, axis=int(axis), exclusive=bool(exclusive), reverse=bool(reverse))
    return output_tensor(_keep_integer_dtype(result, x))


def argmax(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    return wrap(np.argmax(plain_value(input), axis=0 if axis is None else int(axis))
                .astype(dtypes.as_numpy_dtype(output_type)))


def argmin(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    return wrap(np.argmin(plain_value(input), axis=0 if axis is None else int(axis))
                .astype(dtypes.as_numpy_dtype(output_type)))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """The Euclidean (Frobenius) norm over `axis` (all elements by default), as tf.norm.

    Its gradient at an all-zero input is 0 (TF gives NaN there).
    """
    if ord not in ("euclidean", "fro", 2, None):
        raise NotImplementedError(f"[norm] ord={ord!r} is not supported; use the euclidean norm.")
    return output_tensor(dnp.norm(to_tensor(tensor), axis=_axis(axis), keepdims=bool(keepdims)))


# -- shapes --------------------------------------------------------------------------------------
def reshape(tensor, shape, name=None):
    return output_tensor(dnp.reshape(to_tensor(tensor), [int(s) for s in _static_list(shape)]))


def _static_list(values):
    if isinstance(values, Tensor):
        return list(np.ravel(values.numpy()))
    if isinstance(values, (int, np.integer)):
        return [int(values)]
    return [int(v) for v in values]


def transpose(a, perm=None, conjugate=False, name=None):
    return output_tensor(dnp.transpose(to_tensor(a), None if perm is None else _static_list(perm)))


def expand_dims(input, axis, name=None):  # noqa: A002
    return output_tensor(dnp.expand_dims(to_tensor(input), int(axis)))


def squeeze(input, axis=None, name=None):  # noqa: A002
    return output_tensor(dnp.squeeze(to_tensor(input), axis=_axis(axis)))


def concat(values, axis, name=None):
    return output_tensor(dnp.concatenate([to_tensor(v) for v in values], axis=int(axis)))


def stack(values, axis=0, name=None):
    return output_tensor(dnp.stack([to_tensor(v) for v in values], axis=int(axis)))


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    value = to_tensor(value)
    if isinstance(num_or_size_splits, (int, np.integer)):
        return [output_tensor(p) for p in dnp.split(value, int(num_or_size_splits), axis=int(axis))]
    sizes = _static_list(num_or_size_splits)
    return [output_tensor(p) for p in dnp.split(value, list(np.cumsum(sizes)[:-1]), axis=int(axis))]


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    if mode.upper() != "CONSTANT":
        raise NotImplementedError(f"[pad] mode={mode!r} is not supported; use 'CONSTANT'.")
    widths = [tuple(_static_list(p)) for p in (paddings.numpy() if isinstance(paddings, Tensor) else paddings)]
    return output_tensor(dnp.pad(to_tensor(tensor), widths, constant_values=float(constant_values)))


def tile(input, multiples, name=None):  # noqa: A002
    return output_tensor(dnp.tile(to_tensor(input), tuple(_static_list(multiples))))


def broadcast_to(input, shape, name=None):  # noqa: A002
    return output_tensor(dnp.broadcast_to(to_tensor(input), tuple(_static_list(shape))))


def gather(params, indices, axis=None, batch_dims=0, name=None):
    indices = to_tensor(indices)  # TF's rules (a Python list is int32), kept for IndexedSlices' indices
    return output_tensor(dnp.gather(to_tensor(params), indices, axis=0 if axis is None else int(axis)))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    npd = dtypes.as_numpy_dtype(dtype or dtypes.float32)
    if isinstance(indices, Traced) and not isinstance(indices, Tensor):  # a vmap's labels: the registry op
        return dnp.one_hot(indices, depth, on_value, off_value, axis, npd)
    hot = np.eye(int(depth), dtype=npd)[np.asarray(indices)]
    if on_value is not None or off_value is not None:
        on = 1 if on_value is None else on_value
        off = 0 if off_value is None else off_value
        hot = np.where(hot == 1, on, off).astype(npd)
    return wrap(hot if axis in (None, -1) else np.moveaxis(hot, -1, int(axis)))


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    return wrap(np.array(np.shape(input), dtype=dtypes.as_numpy_dtype(out_type)))


def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    return wrap(np.array(np.size(input), dtype=dtypes.as_numpy_dtype(out_type)))


def rank(input, name=None):  # noqa: A002
    return wrap(np.array(np.ndim(input), dtype=np.int32))


# -- linear algebra ------------------------------------------------------------------------------
def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    a, b = _pair(a, b)
    if transpose_a:
        a = dnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = dnp.swapaxes(b, -1, -2)
    return output_tensor(dnp.matmul(a, b))


def einsum(equation, *inputs, **kwargs):
    return output_tensor(dnp.einsum(equation, *[to_tensor(x) for x in inputs]))


def tensordot(a, b, axes, name=None):
    return output_tensor(dnp.tensordot(*_pair(a, b), axes=axes))


# -- constructors (constants: never recorded) ----------------------------------------------------
def _dims(shape):
    return tuple(_static_list(shape))


def zeros(shape, dtype=dtypes.float32, name=None):
    return wrap(np.zeros(_dims(shape), dtypes.as_numpy_dtype(dtype)))


def ones(shape, dtype=dtypes.float32, name=None):
    return wrap(np.ones(_dims(shape), dtypes.as_numpy_dtype(dtype)))


def fill(dims, value, name=None):
    """`value` (its dtype: Python int int32, float float32) broadcast to `dims`; its
    gradient is the sum of the upstream, as TF's Fill."""
    return output_tensor(dnp.broadcast_to(to_tensor(value), _dims(dims)))


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    return wrap(np.zeros(np.shape(input), dtypes.as_numpy_dtype(dtype) if dtype else to_tensor(input).dtype._np))


def ones_like(input, dtype=None, name=None):  # noqa: A002
    return wrap(np.ones(np.shape(input), dtypes.as_numpy_dtype(dtype) if dtype else to_tensor(input).dtype._np))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns),
               dtype=dtypes.as_numpy_dtype(dtype))
    if batch_shape is not None:
        m = np.broadcast_to(m, _dims(batch_shape) + m.shape).copy()
    return wrap(m)


def linspace(start, stop, num, name=None, axis=0):
    """`num` values from `start` to `stop` along a new `axis`, as TF's linspace_nd: `stop`
    converts to `start`'s dtype, integers divide into float64 (tf.linspace(-2, 2, 9) is
    float64 [-2, -1.5, ...]), float32 stays float32; value i is start + i * delta in that
    dtype, the last one `stop` itself. Differentiable in start and stop, as in TF."""
    start = to_tensor(start)
    stop = to_tensor(stop, start.dtype)
    n = int(num)
    if start.dtype._np.kind not in "fc":  # TF: int32 / int32 is float64
        start, stop = dnp.cast(start, np.float64), dnp.cast(stop, np.float64)
    npd = dnp.result_dtype(start)
    shape = np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
    ax = int(axis) if int(axis) >= 0 else len(shape) + 1 + int(axis)
    first = dnp.expand_dims(dnp.broadcast_to(start, shape), ax)
    last = dnp.expand_dims(dnp.broadcast_to(stop, shape), ax)
    delta = (last - first) / np.asarray(max(n - 1, 1), npd)
    inner = np.arange(1, max(n - 1, 1), dtype=npd).reshape((-1,) + (1,) * (len(shape) - ax))
    values = dnp.concatenate([first, first + inner * delta, last], axis=ax)
    return output_tensor(values[(slice(None),) * ax + (slice(0, max(n, 0)),)])


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    if limit is None:
        start, limit = 0, start
    bounds = [plain_value(v) if isinstance(v, Traced) else v for v in (start, limit, delta)]
    values = np.arange(*bounds)
    if dtype is not None:
        npd = dtypes.as_numpy_dtype(dtype)
    else:  # TF's rule: the widest argument dtype (Python ints int32, floats float32), a
        #      float one if any argument is a float
        kinds = [b.dtype if isinstance(b, (np.ndarray, np.generic)) else dtypes.to_array(b).dtype
                 for b in bounds]
        floats = [d for d in kinds if d.kind == "f"]
        npd = np.result_type(*(floats or kinds))
    return wrap(values.astype(npd))


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """TF's `tf.vectorized_map`: `fn` applied to every slice of `elems` along axis 0, in one
    vectorized pass (dualtape.vmap). `elems` is a tensor or a nested structure of them, all
    with the same first dimension; `fn` takes one slice of that structure. Ops without a
    batching rule run once per slice, which is TF's `fallback_to_while_loop`."""
    as_tensors = lambda e: nest.tree_map(lambda leaf: wrap(leaf) if not isinstance(leaf, Tensor) else leaf, e)
    out = vmap(lambda e: fn(as_tensors(e)))(elems)  # fn gets tensors, as in TF (tape.watch(x) works)
    return nest.tree_map(lambda leaf: leaf if isinstance(leaf, Traced) else convert_to_tensor(leaf), out)
