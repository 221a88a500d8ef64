"""Batching rules: each registry op run once for a whole vmap batch (batch axis first).

A rule is `rule(op, values, batched, static, size) -> value`: `values` are the op's
arguments, those with `batched[i]` holding `size` examples stacked on axis 0, the others
the same for every example; the result holds the op's result for every example, stacked
on axis 0. Rules call ops again (registry ops or dnp functions), so an outer tape, dual
number or vmap sees the batched computation.

Elementwise ops get theirs derived (`elementwise`: the examples' axes are lined up so that
NumPy's broadcasting keeps the batch axis first); the ops below have one written for them,
in one table (`RULES`); every other op runs once per example (`loops.loop`), which is right for
any op, and slower. tests/test_batching_rules.py checks every op's rule against `loop`.
"""

import inspect

import numpy as np

from ..core import apply_rules, dnp
from ..core.registry import REGISTRY
from ..core.rulekit.shapes import shape_of
from ..forward.batching import adjacent_arrays
from .loops import loop


# Ops whose VJP and JVP rules compute plain values (indices, orders) from their primals: run
# once per example under vmap (loops.per_example; tests/test_batching_rules.py finds them).
apply_rules.PER_EXAMPLE.update(["Sort", "Partition", "Median", "Quantile", "Percentile", "GatherV2",
                                "TakeAlongAxis", "Interp", "ClipByValue", "PutAlongAxis", "EigValues",
                                "EigVectors", "MaxPool"])


def rule_for(op):
    """The batching rule of `op`: written, derived (elementwise), or the per-example loop."""
    rule = RULES.get(op.name)
    if rule is not None:
        return rule
    return elementwise if op.elementwise else loop


def _reshape(v, shape):
    return v.reshape(shape) if v.__class__ is np.ndarray else dnp.reshape(v, shape)


def _axis(axis, ndim, op):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"[{op.name}] axis {axis} is out of bounds for an array of "
                                      f"dimension {ndim} (one example of the vmap batch)")
    return axis % ndim + 1


def _axes(axis, ndim, op):
    """Static `axis` (int or tuple) for one example, as the axes of the batched value."""
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, ndim, op) for a in axis)
    return _axis(axis, ndim, op)


def _batched(v, size):
    """`v` for every example: an unbatched value broadcast along a new leading axis."""
    return dnp.broadcast_to(v, (size,) + tuple(dnp.shape(v)))


# -- derived: elementwise ops and per-example loops -----------------------------------------

def _lined_up(values, batched):
    """The examples' axes lined up: a batched value whose example has fewer axes than the
    others' gets size-1 axes after the batch axis, so broadcasting keeps the batch axis first."""
    ndims = [(v.ndim if v.__class__ is _ndarray else len(shape_of(v))) - b for v, b in zip(values, batched)]
    rank = max(ndims)
    for v, b, n in zip(values, batched, ndims):
        if b and n < rank:
            break
    else:
        return values  # (the common case: nothing to line up)
    args = []
    for v, b, n in zip(values, batched, ndims):
        if b and n < rank:
            shape = shape_of(v)
            v = _reshape(v, shape[:1] + (1,) * (rank - n) + shape[1:])
        args.append(v)
    return args


def elementwise(op, values, batched, static, size):
    """NumPy's broadcasting, with the examples' axes lined up (`_lined_up`)."""
    args = _lined_up(values, batched)
    if op is _MUL and len(args) == 2 and args[0].__class__ is np.ndarray and args[1].__class__ is np.ndarray:
        product = _outer_product(*args)
        if product is not None:
            return product
    return op(*args, **static) if static else op(*args)


_MUL = REGISTRY["Mul"]
_ndarray = np.ndarray
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _outer_product(a, b):
    """a * b where broadcasting makes the result larger than both (per-example outer products,
    the VJP of x @ W for each example's own x): one einsum, which NumPy runs about twice as fast
    as its broadcasting multiply. Each element is the same single product, so the values are
    the same. None when this is not such a product."""
    if a.shape == b.shape or a.ndim != b.ndim or a.dtype != b.dtype or a.dtype.kind != "f" \
            or a.ndim > len(_LETTERS):
        return None  # (the common elementwise product stops at its first test)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if a.shape == shape or b.shape == shape:
        return None
    terms = []
    for x in (a, b):
        kept = [i for i, n in enumerate(x.shape) if n != 1 or shape[i] == 1]
        terms.append(("".join(_LETTERS[i] for i in kept), x.reshape([x.shape[i] for i in kept])))
    return np.einsum(f"{terms[0][0]},{terms[1][0]}->{_LETTERS[:len(shape)]}", terms[0][1], terms[1][1])


# -- one input, an `axis` ------------------------------------------------------------------

def _only_first(fn):
    """A rule for ops batched in their first argument only; anything else loops."""
    def rule(op, values, batched, static, size):
        if not batched[0] or any(batched[1:]):
            return loop(op, values, batched, static, size)
        return fn(op, values, static, size)
    rule.__name__ = fn.__name__
    return rule


def _static(op, static, key):
    """Static argument `key` of `op`: the call's, else the default of its implementation."""
    if key in static:
        return static[key]
    defaults = _DEFAULTS.get(op.name)
    if defaults is None:
        try:
            params = inspect.signature(op.impl).parameters.values()
        except (TypeError, ValueError):
            params = ()
        defaults = _DEFAULTS[op.name] = {p.name: p.default for p in params if p.default is not p.empty}
    return defaults.get(key)


_DEFAULTS = {}


def _reduction(none="all", key="axis"):
    """An op along `axis`; `none`: what axis=None means: "all" axes (sum) or "flatten"
    (cumsum, sort: the op on the raveled array), or "flatten, same shape" (roll)."""
    @_only_first
    def reduction(op, values, static, size):
        x = values[0]
        ndim = len(shape_of(x)) - 1
        axis = _static(op, static, key)
        st = dict(static)
        if axis is None:
            if none != "all":
                if st.get("keepdims"):
                    return loop(op, values, [True] + [False] * (len(values) - 1), static, size)
                st[key] = 1
                out = op(_reshape(x, (size, -1)), *values[1:], **st)
                return _reshape(out, shape_of(x)) if none == "flatten, same shape" else out
            else:
                st[key] = tuple(range(1, ndim + 1))
        else:
            st[key] = _axes(axis, ndim, op)
        return op(x, *values[1:], **st)
    return reduction


@_only_first
def _quantile(op, values, static, size):
    """Percentile and Quantile: an array q puts its axes in front of the result's."""
    out = _reduction()(op, values, [True], static, size)
    qdim = np.ndim(static["q"])
    return dnp.moveaxis(out, qdim, 0) if qdim else out


def _axis_of_result(op_ndim):
    """Ops whose `axis` counts the result's axes (expand_dims, stack): shifted past the batch."""
    def rule(op, values, batched, static, size):
        args = [v if b else _batched(v, size) for v, b in zip(values, batched)]
        ndim = op_ndim(values, batched, static)
        st = dict(static)
        st["axis"] = _axes(static["axis"], ndim, op)
        return op(*args, **st)
    return rule


def _same_axis(op, values, batched, static, size):
    """Ops whose inputs share the example's axes (concatenate, take_along_axis, cross):
    unbatched inputs broadcast to the batch, batched ones of fewer axes get size-1 axes after
    the batch axis (as `elementwise` does), then `axis` shifts past the batch axis."""
    axis = _static(op, static, "axis")
    if axis is None or any(k in static for k in ("axisa", "axisb", "axisc")):  # (cross's own axes)
        return loop(op, values, batched, static, size)
    rank = max(len(shape_of(v)) - b for v, b in zip(values, batched))
    args = _lined_up([v if b else _batched(v, size) for v, b in zip(values, batched)], [True] * len(values))
    st = dict(static)
    st["axis"] = _axes(axis, rank, op)
    return op(*args, **st)


@_only_first
def _squeeze(op, values, static, size):
    x = values[0]
    shape = shape_of(x)[1:]
    axis = static.get("axis")
    if axis is None:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    return op(x, axis=_axes(axis if isinstance(axis, (tuple, list)) else (axis,), len(shape), op))


@_only_first
def _gather(op, values, static, size):
    st = dict(static)
    st["axis"] = _axis(static["axis"], len(shape_of(values[0])) - 1, op)
    return op(*values, **st)


# -- shapes ----------------------------------------------------------------------------------

@_only_first
def _reshape_rule(op, values, static, size):
    shape = static["shape"]
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return op(values[0], shape=(size,) + shape)


@_only_first
def _transpose(op, values, static, size):
    ndim = len(shape_of(values[0])) - 1
    axes = static.get("axes")
    axes = tuple(range(ndim - 1, -1, -1)) if axes is None else tuple(_axis(a, ndim, op) - 1 for a in axes)
    return op(values[0], axes=(0,) + tuple(a + 1 for a in axes))


@_only_first
def _swapaxes(op, values, static, size):
    ndim = len(shape_of(values[0])) - 1
    return op(values[0], axis1=_axis(static["axis1"], ndim, op), axis2=_axis(static["axis2"], ndim, op))


@_only_first
def _broadcast_to(op, values, static, size):
    x = values[0]
    shape = tuple(static["shape"])
    xshape = shape_of(x)[1:]
    if len(xshape) > len(shape):
        return loop(op, values, [True], static, size)  # NumPy's error, per example
    x = _reshape(x, (size,) + (1,) * (len(shape) - len(xshape)) + xshape)
    return op(x, shape=(size,) + shape)


@_only_first
def _tile(op, values, static, size):
    x = values[0]
    reps = static["reps"]
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    xshape = shape_of(x)[1:]
    ndim = max(len(xshape), len(reps))
    x = _reshape(x, (size,) + (1,) * (ndim - len(xshape)) + xshape)
    return op(x, reps=(1,) + (1,) * (ndim - len(reps)) + reps)


@_only_first
def _pad(op, values, static, size):
    x = values[0]
    ndim = len(shape_of(x)) - 1
    width = np.broadcast_to(np.asarray(static["pad_width"]), (ndim, 2))
    st = dict(static)
    st["pad_width"] = tuple((int(a), int(b)) for a, b in [(0, 0)] + [tuple(w) for w in width])
    return op(x, **st)


@_only_first
def _rot90(op, values, static, size):
    ndim = len(shape_of(values[0])) - 1
    st = dict(static)
    st["axes"] = tuple(_axis(a, ndim, op) for a in static.get("axes", (0, 1)))
    return op(values[0], **st)


def _flip_axis(axis):
    @_only_first
    def flip(op, values, static, size):
        x = values[0]
        ndim = len(shape_of(x)) - 1
        if ndim <= axis:
            return loop(op, values, [True], static, size)  # NumPy's error, per example
        index = (slice(None),) * (axis + 1) + (slice(None, None, -1),)
        return dnp.getitem(x, index)
    return flip


def _last_two(op, values, batched, static, size):
    """Ops on the last two axes, broadcasting over the ones in front (np.linalg's stacks)."""
    if all(len(shape_of(v)) - b >= 2 for v, b in zip(values, batched)):
        return op(*_lined_up(values, batched), **static)
    return loop(op, values, batched, static, size)


def _solve(op, values, batched, static, size):
    """np.linalg.solve: a vector right-hand side is a one-column matrix."""
    a, b = values
    a_batched, b_batched = batched
    a_ndim = len(shape_of(a)) - a_batched
    b_ndim = len(shape_of(b)) - b_batched
    if a_ndim != 2 or b_ndim not in (1, 2):
        return loop(op, values, batched, static, size)
    a = a if a_batched else _batched(a, size)
    b = b if b_batched else _batched(b, size)
    if b_ndim == 1:
        return dnp.squeeze(op(a, dnp.expand_dims(b, -1)), -1)
    return op(a, b)


@_only_first
def _getitem(op, values, static, size):
    index = static["index"]
    if not adjacent_arrays(index):  # separated index arrays: NumPy would move their axes before the batch
        return loop(op, values, [True], static, size)
    return op(values[0], index=(slice(None),) + tuple(index))


def _unindex(op, values, batched, static, size):
    index = static["index"]
    if not batched[0] or not adjacent_arrays(index):
        return loop(op, values, batched, static, size)
    return op(values[0], shape=(size,) + tuple(static["shape"]), index=(slice(None),) + tuple(index))


def _joined(promote, axis):
    """hstack, vstack, dstack, column_stack: each example's arrays promoted (`promote`: the
    per-example shape NumPy gives an array of this shape), then joined along `axis` of the
    promoted arrays (a function of the first one's rank)."""
    def rule(op, values, batched, static, size):
        args = []
        for v, b in zip(values, batched):
            shape = shape_of(v)[1:] if b else shape_of(v)
            v = v if b else _batched(v, size)
            args.append(_reshape(v, (size,) + promote(shape)))
        return dnp.concatenate(args, axis=axis(len(shape_of(args[0])) - 1) + 1)
    return rule


def _norm(op, values, batched, static, size):
    """np.linalg.norm: axis=None means the flattened vector (ord None) or a matrix's own norm."""
    if not batched[0]:
        return loop(op, values, batched, static, size)
    x = values[0]
    ndim = len(shape_of(x)) - 1
    st = dict(static)
    axis = static.get("axis")
    if axis is None:
        if static.get("ord") is None:
            return op(_reshape(x, (size, -1)), **{**st, "axis": 1})
        if ndim not in (1, 2):
            return loop(op, values, batched, static, size)  # NumPy's error, per example
        st["axis"] = 1 if ndim == 1 else (1, 2)
    else:
        st["axis"] = _axes(axis, ndim, op)
    if static.get("keepdims") and axis is None:
        return loop(op, values, batched, static, size)
    return op(x, **st)


def _elementwise_in(argnum):
    """searchsorted(a, v), interp(x, xp, fp): elementwise in one argument (v, x) given the rest."""
    def rule(op, values, batched, static, size):
        if batched[argnum] and sum(batched) == 1:
            return op(*values, **static)
        return loop(op, values, batched, static, size)
    return rule


@_only_first
def _fftn(op, values, static, size):
    """np.fft's N-D transforms: axes=None is every axis, or the last len(s) with s given."""
    x = values[0]
    ndim = len(shape_of(x)) - 1
    s, axes = static.get("s"), static.get("axes")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return op(x, **{**static, "axes": tuple(_axis(a, ndim, op) for a in axes)})


# -- contractions ----------------------------------------------------------------------------

def _matmul(op, values, batched, static, size):
    """x @ y: a vector x is a (1, n) row and a vector y an (n, 1) column; the batch axis is one
    more stack axis in front, and the examples' stack axes are lined up behind it."""
    (x, y), (bx, by) = values, batched
    xs = shape_of(x)[1:] if bx else shape_of(x)
    ys = shape_of(y)[1:] if by else shape_of(y)
    if not xs or not ys:
        return loop(op, values, batched, static, size)  # NumPy's error for a scalar, per example
    if not by and len(xs) <= 2 and len(ys) == 2:  # the common cases: (B, n) @ (n, m), (B, k, n) @ (n, m)
        return op(x, y)
    xm = xs if len(xs) >= 2 else (1,) + xs
    ym = ys if len(ys) >= 2 else ys + (1,)
    rank = max(len(xm), len(ym))
    if bx:
        x = _reshape(x, (size,) + (1,) * (rank - len(xm)) + xm)
    elif len(xs) == 1:
        x = _reshape(x, xm)
    if by:
        y = _reshape(y, (size,) + (1,) * (rank - len(ym)) + ym)
    elif len(ys) == 1:
        y = _reshape(y, ym)
    out = op(x, y)
    if len(xs) >= 2 and len(ys) >= 2:
        return out
    stack = shape_of(out)[1:-2]
    return _reshape(out, (size,) + stack + xm[-2:-1] * (len(xs) >= 2) + ym[-1:] * (len(ys) >= 2))


def _einsum(op, values, batched, static, size):
    key = (static["subscripts"], tuple(batched))
    subscripts = _BATCHED_SUBSCRIPTS.get(key)
    if subscripts is None:
        subscripts = _batched_subscripts(*key)
        if len(_BATCHED_SUBSCRIPTS) > 1024:
            _BATCHED_SUBSCRIPTS.clear()
        _BATCHED_SUBSCRIPTS[key] = subscripts
    if not subscripts:
        return loop(op, values, batched, static, size)
    return op(*values, subscripts=subscripts)


_BATCHED_SUBSCRIPTS = {}  # (subscripts, batched) -> _batched_subscripts, made once


def _batched_subscripts(subscripts, batched):
    """The subscripts with a free letter in front of each batched operand and of the output,
    or "" where the per-example loop runs (an ellipsis or an implicit output)."""
    subscripts = subscripts.replace(" ", "")
    if "..." in subscripts or "->" not in subscripts:
        return ""
    inputs, output = subscripts.split("->")
    letters = set(subscripts) - set(",->")
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in letters)
    terms = [free + t if b else t for t, b in zip(inputs.split(","), batched)]
    return ",".join(terms) + "->" + free + output


# -- the table -------------------------------------------------------------------------------

RULES = {}


DECLARED = set()  # every name given a rule (tests/test_batching_rules.py: each is a registry op)


def _declare(names, rule):
    for name in names:
        DECLARED.add(name)
        if name in REGISTRY:  # (the SciPy ops are declared only where SciPy is installed)
            RULES[name] = rule


_declare(["Sum", "Mean", "Max", "Min", "Prod", "NanSum", "NanMean", "NanMax", "NanMin", "All", "Any",
          "ReduceLogSumExp", "ReduceStd", "ReduceVariance", "EuclideanNorm", "Ptp", "CountNonzero",
          "Median", "ScipyLogSumExp"], _reduction())
_declare(["Percentile", "Quantile"], _quantile)
_declare(["ArgMax", "ArgMin", "Cumsum", "Cumprod", "Sort", "ArgSort", "Partition", "ArgPartition"],
         _reduction("flatten"))
_declare(["Roll"], _reduction("flatten, same shape"))
_declare(["Softmax", "LogSoftmax", "Diff"], _reduction())
_declare(["ExpandDims"], _axis_of_result(lambda values, batched, static: len(shape_of(values[0])) - batched[0]
                                         + (len(static["axis"]) if isinstance(static["axis"], (tuple, list)) else 1)))
_declare(["Pack"], _axis_of_result(lambda values, batched, static: len(shape_of(values[0])) - batched[0] + 1))
_declare(["ConcatV2", "TakeAlongAxis", "PutAlongAxis", "Cross"], _same_axis)
_declare(["Squeeze"], _squeeze)
_declare(["GatherV2"], _gather)
_declare(["Reshape"], _reshape_rule)
_declare(["Transpose"], _transpose)
_declare(["Swapaxes"], _swapaxes)
_declare(["BroadcastTo"], _broadcast_to)
_declare(["Tile"], _tile)
_declare(["PadV2"], _pad)
_declare(["Rot90"], _rot90)
_declare(["FlipUd"], _flip_axis(0))
_declare(["FlipLr"], _flip_axis(1))
_declare(["Tril", "Triu", "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant",
          "LogMatrixDeterminantSign", "Cholesky", "QrQ", "QrR", "SvdU", "SvdValues", "SvdVh",
          "SelfAdjointEigValues", "SelfAdjointEigVectors", "MatrixPinv", "MatrixPower", "EigValues", "EigVectors"], _last_two)
_declare(["MatrixSolve"], _solve)
_declare(["StridedSlice"], _getitem)
_declare(["StridedSliceGrad"], _unindex)
_declare(["MatMul"], _matmul)
_declare(["Einsum"], _einsum)
_declare(["FFT", "IFFT", "RFFT", "IRFFT"], _fftn)
_declare(["HFFT", "IHFFT"], _reduction())
_declare(["FFTShift", "IFFTShift"], _reduction(key="axes"))
_declare(["HStack"], _joined(lambda s: s if s else (1,), lambda r: 0 if r == 1 else 1))
_declare(["VStack"], _joined(lambda s: s if len(s) >= 2 else (1,) + s if s else (1, 1), lambda r: 0))
_declare(["ColumnStack"], _joined(lambda s: s if len(s) >= 2 else s + (1,) if s else (1, 1), lambda r: 1))
_declare(["DStack"], _joined(lambda s: s + (1,) if len(s) == 2 else (1,) + s + (1,) if len(s) == 1
                             else s if s else (1, 1, 1), lambda r: 2))
_declare(["OneHot"], _axis_of_result(lambda values, batched, static: len(shape_of(values[0])) - batched[0] + 1))
_declare(["LinalgNorm"], _norm)
_declare(["SearchSorted"], _elementwise_in(1))
_declare(["Interp"], _elementwise_in(0))
_declare(["NormalCdf", "NormalDensity", "StudentTCdf", "StudentTDensity", "BetaDistCdf", "BetaDistDensity",
          "GammaDistCdf", "GammaDistDensity", "PoissonCdf", "PoissonDist"], elementwise)
_declare(["Cast", "Acosh", "Erfcinv", "Logit", "Multigammaln", "BesselIv", "BesselIve", "BesselJv",
          "BesselYn", "Igamma", "Igammac", "Polygamma"], elementwise)

