"""Pattern rules: which inputs each element of an op's result depends on, and which pairs of
inputs the op couples nonlinearly (for Hessians).

A rule is `rule(op, args, static, ans, trace) -> deps` (None: depends on no input), where
`args` are the op's arguments (Patterns or constants) and `ans` its value. What the registry
says is used first: a `NOT_DIFFERENTIABLE` op depends on nothing; an elementwise op's element
depends on the same element of each (broadcast) differentiable argument; an op whose JVP is
`LINEAR` couples nothing. Ops that move elements without combining them (reshape, transpose,
slicing, concatenation, ...) are run on element numbers to see where each element goes;
reductions, matmul, einsum, cumsum and diff have written rules. Every other op is dense: each
element of its result depends on every input any argument depends on, which is always safe.
"""

import string

import numpy as np

from ..core.registry import LINEAR, NOT_DIFFERENTIABLE
from .pattern import Pattern, as_rows, deps_of


def _differentiable(op, argnum):
    return op.jvp is None or op.jvp_rule(argnum) is not NOT_DIFFERENTIABLE


def _nonlinear(op):
    return op.jvp is not LINEAR and op.name not in LINEAR_OPS


def _traced(op, args):
    """[(argnum, deps)] of the arguments that carry dependencies through the op."""
    found = []
    for i, a in enumerate(args):
        deps = deps_of(a)
        if deps is not None and _differentiable(op, i):
            found.append((i, deps))
    return found


def broadcast_deps(deps, shape, n):
    """`deps` of a value broadcast to `shape` (NumPy's rules on the value's own axes)."""
    own = deps.shape[:-1]
    deps = deps.reshape((1,) * (len(shape) - len(own)) + own + (n,))
    return np.broadcast_to(deps, tuple(shape) + (n,))


def dense_rule(op, args, static, ans, trace):
    """Every element depends on every input the arguments depend on; a nonlinear op couples
    them all. Safe for any op."""
    n = trace.n
    union = np.zeros(n, dtype=bool)
    found = False
    for i, a in enumerate(args):
        deps = deps_of(a)
        if deps is not None and _differentiable(op, i):
            union |= as_rows(deps, n).any(axis=0)
            found = True
    if not found or op.jvp is NOT_DIFFERENTIABLE:
        return None
    if _nonlinear(op):
        trace.couple(union[None], union[None])
    return np.broadcast_to(union, np.shape(ans) + (n,))


def elementwise_rule(op, args, static, ans, trace):
    if op.jvp is NOT_DIFFERENTIABLE:
        return None
    n = trace.n
    shape = np.shape(ans)
    parts = [(i, broadcast_deps(deps, shape, n)) for i, deps in _traced(op, args)]
    if not parts:
        return None
    out = parts[0][1]
    for _, deps in parts[1:]:
        out = out | deps
    if _nonlinear(op):
        kind = COUPLINGS.get(op.name)
        by_arg = dict(parts)
        if kind == "product":  # x * y: only x with y (d2/dx2 = 0)
            if 0 in by_arg and 1 in by_arg:
                trace.couple(by_arg[0], by_arg[1])
        elif kind == "quotient":  # x / y: x with y, y with y
            if 1 in by_arg:
                trace.couple(out, by_arg[1])
        else:
            trace.couple(out, out)
    return out


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(int(a) % ndim for a in axes) if ndim else ()


def reduction_rule(op, args, static, ans, trace):
    """Sum, mean, prod, max, var, logsumexp, norms: an element of the result depends on the
    elements it reduces (over `axis`, `keepdims` as NumPy)."""
    if op.jvp is NOT_DIFFERENTIABLE or set(static) - {"axis", "keepdims"}:
        return dense_rule(op, args, static, ans, trace)
    parts = _traced(op, args)
    if len(args) != 1 or not parts:
        return dense_rule(op, args, static, ans, trace) if parts else None
    deps = parts[0][1]
    ndim = deps.ndim - 1
    out = np.any(deps, axis=_axes(static.get("axis"), ndim), keepdims=bool(static.get("keepdims", False)))
    if _nonlinear(op):
        trace.couple(out, out)
    return out


def along_axis_rule(op, args, static, ans, trace):
    """Softmax and log-softmax: each element depends on its whole row along `axis`."""
    parts = _traced(op, args)
    if not parts or set(static) - {"axis"}:
        return dense_rule(op, args, static, ans, trace) if parts else None
    deps = parts[0][1]
    ndim = deps.ndim - 1
    row = np.any(deps, axis=_axes(static.get("axis", -1), ndim), keepdims=True)
    trace.couple(row, row)
    return np.broadcast_to(row, deps.shape)


def cumulative_rule(op, args, static, ans, trace):
    """Cumsum and cumprod: element k depends on elements 0..k (k..end reversed) along `axis`."""
    parts = _traced(op, args)
    if not parts or set(static) - {"axis", "exclusive", "reverse"}:
        return dense_rule(op, args, static, ans, trace) if parts else None
    deps = parts[0][1]
    n = trace.n
    axis = static.get("axis")
    if axis is None:
        deps, axis = deps.reshape(-1, n), 0
    axis = int(axis) % (deps.ndim - 1)
    if static.get("reverse", False):
        out = np.flip(np.logical_or.accumulate(np.flip(deps, axis), axis=axis), axis)
    else:
        out = np.logical_or.accumulate(deps, axis=axis)  # (exclusive reads fewer: still covered)
    if _nonlinear(op):
        trace.couple(out, out)
    return out.reshape(np.shape(ans) + (n,))


def diff_rule(op, args, static, ans, trace):
    """np.diff: element k of one difference depends on elements k and k + 1 along `axis`."""
    parts = _traced(op, args)
    if not parts or set(static) - {"axis", "n"}:
        return dense_rule(op, args, static, ans, trace) if parts else None
    deps = parts[0][1]
    axis = int(static.get("axis", -1)) % (deps.ndim - 1)
    for _ in range(int(static.get("n", 1))):
        length = deps.shape[axis]
        deps = np.take(deps, np.arange(1, length), axis=axis) | np.take(deps, np.arange(length - 1), axis=axis)
    return deps


def selection_rule(op, args, static, ans, trace):
    """Ops that move elements without combining them: run the op on element numbers (0 for
    a constant's elements and for fill values) and gather each result element's row."""
    n = trace.n
    tables = [np.zeros((1, n), dtype=bool)]
    numbered = []
    offset = 1
    for i, a in enumerate(args):
        if i in SELECTION_DATA.get(op.name, (i,)):
            size = int(np.prod(np.shape(a)))
            deps = deps_of(a)
            if deps is not None and _differentiable(op, i):
                tables.append(as_rows(deps, n))
                numbered.append(np.arange(offset, offset + size).reshape(np.shape(a)))
                offset += size
            else:
                numbered.append(np.zeros(np.shape(a), dtype=np.int64))
        elif a.__class__ is Pattern:  # an index computed from the inputs' values
            return dense_rule(op, args, static, ans, trace)
        else:
            numbered.append(a)
    if offset == 1:
        return None
    static = dict(static, **SELECTION_STATIC.get(op.name, {}))
    where = np.asarray(op.impl(*numbered, **static))
    if where.shape != np.shape(ans) or where.dtype.kind not in "iu":
        return dense_rule(op, args, static, ans, trace)
    return np.concatenate(tables)[where]


def matmul_rule(op, args, static, ans, trace):
    """x @ y: element (i, j) depends on row i of x and column j of y (batch axes broadcast)."""
    if static or len(args) != 2:
        return dense_rule(op, args, static, ans, trace)
    n = trace.n
    x, y = args
    dx, dy = deps_of(x) if _differentiable(op, 0) else None, deps_of(y) if _differentiable(op, 1) else None
    if dx is None and dy is None:
        return None
    xshape, yshape = np.shape(x), np.shape(y)
    if dx is not None and len(xshape) == 1:
        dx = dx[None]
    if dy is not None and len(yshape) == 1:
        dy = dy[:, None]
    rows = None if dx is None else np.any(dx, axis=-2)[..., :, None, :]  # (..., m, 1, n)
    cols = None if dy is None else np.any(dy, axis=-3)[..., None, :, :]  # (..., 1, p, n)
    full_x = (1,) if len(xshape) == 1 else xshape
    out = rows if cols is None else cols if rows is None else rows | cols
    full = np.broadcast_shapes(tuple(full_x[:-2]) + (full_x[-2] if len(xshape) > 1 else 1,),
                               tuple(yshape[:-2]) + (1,))[:-1]
    m = xshape[-2] if len(xshape) > 1 else 1
    p = yshape[-1] if len(yshape) > 1 else 1
    out = np.broadcast_to(out, full + (m, p, n))
    if dx is not None and dy is not None:  # bilinear: x[i, k] with y[k, j]
        k = dx.shape[-2]
        trace.couple(np.moveaxis(dx, -2, 0).reshape(k, -1, n).any(axis=1),
                     np.moveaxis(dy, -3, 0).reshape(k, -1, n).any(axis=1))
    return out.reshape(np.shape(ans) + (n,))


def einsum_rule(op, args, static, ans, trace):
    """einsum: an element depends on the elements of each operand at its output indices (summed
    indices: all of them); each pair of traced operands is coupled (multilinear)."""
    spec = static.get("subscripts")
    n = trace.n
    parts = _traced(op, args)
    if not parts:
        return None
    if not isinstance(spec, str) or "." in spec or set(static) != {"subscripts"}:
        return dense_rule(op, args, static, ans, trace)
    spec = spec.replace(" ", "")
    inputs, _, output = spec.partition("->")
    labels = inputs.split(",")
    if not _:
        output = "".join(sorted(c for c in set(inputs) if c.isalpha() and inputs.count(c) == 1))
    if len(labels) != len(args) or any(len(set(ls)) != len(ls) for ls in labels + [output]):
        return dense_rule(op, args, static, ans, trace)
    sizes = {}
    for ls, a in zip(labels, args):
        sizes.update(zip(ls, np.shape(a)))
    spare = next(c for c in string.ascii_letters if c not in sizes)
    out = np.zeros(np.shape(ans) + (n,), dtype=bool)
    for i, deps in parts:
        missing = "".join(c for c in output if c not in labels[i])
        ones = np.ones(tuple(sizes[c] for c in missing))
        counts = np.einsum(f"{labels[i]}{spare},{missing}->{output}{spare}", deps.astype(np.float32), ones)
        out |= counts > 0
    for a, (i, left) in enumerate(parts):
        for j, right in parts[a + 1:]:
            trace.couple(as_rows(left, n).any(axis=0)[None], as_rows(right, n).any(axis=0)[None])
    return out


def _rules():
    table = {}
    for name in ("Sum", "Mean", "NanSum", "NanMean", "Prod", "Max", "Min", "NanMax", "NanMin",
                 "ReduceVariance", "ReduceStd", "ReduceLogSumExp", "EuclideanNorm", "Ptp"):
        table[name] = reduction_rule
    for name in ("Softmax", "LogSoftmax"):
        table[name] = along_axis_rule
    for name in ("Cumsum", "Cumprod"):
        table[name] = cumulative_rule
    for name in ("Reshape", "BroadcastTo", "Transpose", "Swapaxes", "ExpandDims", "Squeeze", "Tile",
                 "ConcatV2", "Pack", "StridedSlice", "GatherV2", "TakeAlongAxis", "PadV2", "Roll",
                 "FlipUd", "FlipLr", "Rot90", "RollAxis", "Tril", "Triu", "Diag", "DiagFlat", "HStack",
                 "VStack", "DStack", "ColumnStack", "Append", "AtLeast1d", "AtLeast2d", "AtLeast3d",
                 "FFTShift", "IFFTShift"):
        table[name] = selection_rule
    for name in ("Cast", "Acosh", "Logit", "Erfcinv"):  # elementwise, though not declared so
        table[name] = elementwise_rule
    table["Diff"] = diff_rule
    table["MatMul"] = matmul_rule
    table["Einsum"] = einsum_rule
    return table


RULES = _rules()
# ops that are linear in their differentiable arguments though their JVP is not declared LINEAR
LINEAR_OPS = frozenset(("AddV2", "Sub", "Neg", "Identity", "Real", "Imag", "Conj", "Deg2Rad", "Rad2Deg",
                        "SelectV2", "Cast", "PadV2", "TakeAlongAxis", "GatherV2", "Sum", "Mean", "NanSum",
                        "NanMean", "Cumsum", "Diff"))
# elementwise ops whose second derivative couples fewer pairs than all of their arguments'
COUPLINGS = {"Mul": "product", "RealDiv": "quotient"}
# selection ops whose other arguments are indices (given as they are, never numbered)
SELECTION_DATA = {"GatherV2": (0,), "TakeAlongAxis": (0,), "PadV2": (0,)}
# static arguments replaced when the op runs on element numbers (fill values become "none")
SELECTION_STATIC = {"PadV2": {"constant_values": 0}}


def rule_for(op):
    """The pattern rule of `op`: written, elementwise, or dense."""
    rule = RULES.get(op.name)
    if rule is not None:
        return rule
    if op.elementwise:
        return elementwise_rule
    return dense_rule
