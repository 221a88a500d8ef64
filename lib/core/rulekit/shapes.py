"""rulekit, shapes: broadcasting, reductions and elementwise pieces of rules
(`unbroadcast`, `unreduce`, `step`, `prod_others`, ...). See `rulekit`."""

import numpy as np

from .. import dnp


def shape_of(x):
    """np.shape, without NumPy's dispatch overhead for arrays, scalars and tensors."""
    if x.__class__ is _ndarray:
        return x.shape
    shape = getattr(x, "shape", None)
    return np.shape(x) if shape is None else tuple(shape)


def ndim_of(x):
    """np.ndim, without NumPy's dispatch overhead (dual numbers reach it through
    `__array_function__` otherwise)."""
    if x.__class__ is _ndarray:
        return x.ndim
    return len(shape_of(x))


_ndarray = np.ndarray
_add_reduce = np.add.reduce
_PLAIN_FLOATS = frozenset((np.ndarray, np.float64, np.float32))


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
    if isinstance(g, (list, tuple)):  # (generated code only: adjoints of lists are lists)
        raise TypeError(f"[unbroadcast] the adjoint of an elementwise op's operand of shape {shape} is a Python "
                        "list: a list operand was read as an array (list concatenation `a + b` or repetition of "
                        "lists the transformer could not see were lists).\n  Spell list concatenation with a list "
                        "display or a name bound to one (ys = ys + [v]), or stack the items (np.stack).")
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
    if g.__class__ in _PLAIN_FLOATS and not BATCH_NDIM[0] and g.dtype.kind in "fc":
        r = g.reshape(reduced_shape(shape, axis)) if not keepdims else g  # (a NumPy scalar: an array)
        fast = _broadcast_view(r, tuple(shape)) if r.__class__ is _ndarray else None
        if fast is not None:
            return fast
    return dnp.broadcast_to(keepdims_shape(g, shape, axis, keepdims),
                            shape_of(g)[:BATCH_NDIM[0]] + tuple(shape))


def _broadcast_view(r, shape):
    """np.broadcast_to(r, shape) for a contiguous `r` of the same rank, as one read-only view
    made by the ndarray constructor (NumPy's own costs an nditer): None when it does not apply."""
    if r.ndim != len(shape) or not r.flags.c_contiguous or not r.size:
        return None
    strides = []
    for n, m, stride in zip(r.shape, shape, r.strides):
        if n == m:
            strides.append(stride)
        elif n == 1:
            strides.append(0)
        else:
            return None
    view = _ndarray(shape, r.dtype, r, 0, tuple(strides))
    view.setflags(write=False)
    return view


def keepdims_shape(g, shape, axis=None, keepdims=False):
    """Reshape a reduction result so it broadcasts against the input of `shape`."""
    if keepdims or axis is None and ndim_of(g) == BATCH_NDIM[0] and len(shape) == 0:
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


def no_derivative(op_name, param, tangent):
    """The rule of an input whose derivative exists but dualtape does not compute (gammainc's
    shape a, a Bessel function's order v): asking for it raises, where no rule would be a zero."""
    raise LookupError(f"[{op_name}] has no derivative with respect to {param} (asked for with a tangent or "
                      f"cotangent of shape {np.shape(tangent)}): dualtape differentiates it in its other arguments "
                      f"only, as autograd. Fix: keep {param} constant (dnp.stop_gradient), or write the function "
                      f"of {param} with dnp ops or dualtape.custom_gradient.")


def swap_last(x):
    """Swap the last two axes (the matrix transpose of a stack of matrices)."""
    return dnp.swapaxes(x, -1, -2) if ndim_of(x) >= 2 else x


def step(x):
    """1 where x > 0, else 0 (the derivative of relu; relu'(0) = 0 as in TF)."""
    return x > 0


def log_where_positive(x):
    """log(x) where x > 0, else 0: Pow's exponent gradient, NaN-free at x <= 0 as in TF. On
    complex values, the principal log(x) where x != 0 (x ** y is exp(y log x) there)."""
    positive = dnp.not_equal(x, 0) if dnp.result_dtype(x).kind == "c" else x > 0
    return dnp.where(positive, dnp.log(dnp.where(positive, x, dnp.ones_like(x))), dnp.zeros_like(x))


def power_slope(x, y):
    """d(x ** y)/dx = y * x ** (y - 1), and 0 where x == 0 and y == 0: x ** 0 is 1 for every x
    (NumPy's 0 ** 0 too), but the formula reads 0 * 0 ** -1 = NaN there. The double `where`
    (as JAX's Pow rule) keeps every order NaN-free; a nonzero Python exponent needs no guard."""
    if isinstance(y, (int, float)) and y != 0:
        if y == 2:
            return y * x  # (x ** 2, a square: x ** 1 is x exactly, one op fewer)
        return y * dnp.power(x, y - 1)
    if x.__class__ in _PLAIN_FLOATS and y.__class__ in _PLAIN_FLOATS and not ((x == 0) & (y == 0)).any():
        return y * dnp.power(x, y - 1)  # (plain arrays: the guard's where costs more than this test)
    at_zero = dnp.logical_and(dnp.equal(x, 0), dnp.equal(y, 0))
    return dnp.where(at_zero, 0.0, y * dnp.power(dnp.where(at_zero, 1.0, x), y - 1))


def matmul_vjp_left(g, x, y):
    """Cotangent of x in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if ndim_of(y) == 1:
        if ndim_of(x) == 1:
            return dnp.expand_dims(g, -1) * y  # also right for a batch of cotangents
        return unbroadcast(dnp.expand_dims(g, -1) * y, shape_of(x))
    if ndim_of(x) == 1:
        return unbroadcast(dnp.matmul(y, dnp.expand_dims(g, -1))[..., 0], shape_of(x))
    return unbroadcast(dnp.matmul(g, swap_last(y)), shape_of(x))


def matmul_vjp_right(g, x, y):
    """Cotangent of y in x @ y, for vectors, matrices and broadcast stacks of matrices."""
    if ndim_of(x) == 1:
        if ndim_of(y) == 1:
            return dnp.expand_dims(g, -1) * x
        return unbroadcast(dnp.expand_dims(x, -1) * dnp.expand_dims(g, -2), shape_of(y))
    if ndim_of(y) == 1:
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
