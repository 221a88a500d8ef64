"""What generated adjoint code imports: rulekit helpers plus small adjoint utilities.

Kept free of the transformer: `df.save(path)` copies the source of the helpers a module uses
(and of what they read) into it, so every helper here must be NumPy, `math` or standard
library code on plain values, apart from its branches for tensors and dual numbers (`_Traced`,
`dnp`), which standalone.py writes as NumPy (tests/test_saved_module.py saves them all).
"""

import math  # noqa: F401  (generated code spells scalar derivatives with math)

import numpy as np

from dualtape.core import dnp  # noqa: F401  (rules without a NumPy twin, e.g. dnp.sigmoid)
from dualtape.core.rulekit import *  # noqa: F401,F403  (unbroadcast, unreduce, matmul_vjp_left, ...)
from dualtape.core.rulekit import unbroadcast  # noqa: F401
from dualtape.core import rulekit as _rulekit
from dualtape.core.registry import Traced as _Traced
from dualtape.ops import linalg as _linalg
from dualtape.ops import linalg_np as _linalg_np
from .revolve import checkpoint_schedule  # noqa: F401  (checkpointed loops: grad(f, checkpoint=...))
from .compositions import *  # noqa: F401,F403  (np.flip, np.cov, np.piecewise, ...: compositions.py)
from .tangents import *  # noqa: F401,F403  (hvp: tangents of adjoint helpers)
from .lists import *  # noqa: F401,F403  (accumulate; list concatenation and repetition)
from .lists import accumulate, bt, zeros_like  # noqa: F401


def owned(g):
    """A private copy of an adjoint that will be updated in place (`bx[i] = 0`, add_at).
    Tensors and dual numbers are immutable: the traced code rebinds instead (set_item)."""
    if isinstance(g, (list, tuple)):
        return list(g)
    if isinstance(g, dict):
        return {key: owned(item) for key, item in g.items()}
    if isinstance(g, _Traced):
        return g
    return np.array(g, dtype=float if np.asarray(g).dtype.kind not in "fc" else None)


def _fancy(index):
    return isinstance(index, (np.ndarray, list)) or (
        isinstance(index, tuple) and any(isinstance(i, (np.ndarray, list)) for i in index))


def add_at(b, index, g):
    """`b[index] += g` on an owned adjoint; repeated fancy indices add up, as np.add.at.
    With a tensor or dual number, a new value `b + unindex(g)` (recorded, tangents kept)."""
    if isinstance(b, (list, dict)):
        b[index] = accumulate(b[index], g)  # items may be lists too (a list of tuples): add, never concatenate
    elif isinstance(b, _Traced) or isinstance(g, _Traced):
        shape = shape_of(b)
        g = dnp.broadcast_to(g, np.empty(shape)[index].shape)
        return b + dnp.unindex(g, shape, index)
    elif _fancy(index):
        np.add.at(b, index, g)
    else:
        b[index] += g
    return b


def set_item(a, index, value):
    """`a[index] = value` in the code run on tensors and dual numbers, which are immutable (and
    NumPy would drop their derivative when writing them into an array): a new value instead.
    The transformer only writes into arrays no other variable shares, so rebinding `a` is the
    same program. Plain arrays are written in place, as before."""
    if isinstance(a, list) or not (isinstance(a, _Traced) or isinstance(value, _Traced)):
        a[index] = value
        return a
    shape = shape_of(a)
    if _fancy(index):
        picked = np.arange(int(np.prod(shape))).reshape(shape)[index].ravel()
        if len(np.unique(picked)) != len(picked):
            raise TypeError(f"[transforms] `a[index] = value` with an array index that picks an element twice, "
                            f"on a tensor or dual number (a of shape {shape}): which write wins is NumPy's "
                            "business, and generated code cannot follow it on traced values.\n  Use "
                            "dualtape.transforms.jvp / hvp instead of running the generated gradient on "
                            "tensors, or index each element once.")
    mask = np.zeros(shape, dtype=bool)
    mask[index] = True
    value = dnp.broadcast_to(value, mask[index].shape)
    return dnp.where(mask, dnp.unindex(value, shape, index), a)


def solve_rhs_shape(shape):
    """The shape np.linalg.solve's b is solved as: a vector (NumPy 2: 1-D) becomes a column."""
    return tuple(shape) + (1,) if len(shape) == 1 else tuple(shape)


def solve_x_shape(shape, b_ndim):
    """The shape of np.linalg.solve's x, from the solution for the column: a vector for a 1-D b."""
    return tuple(shape)[:-1] if b_ndim == 1 else tuple(shape)


slogdet_sign = _linalg_np.SIGN_DETERMINANT  # np.linalg.slogdet(a)[0]: a constant
slogdet_logabs = _linalg_np.LOG_ABS_DETERMINANT  # np.linalg.slogdet(a)[1]: log |det a|


def einsum_subscripts(subscripts, *shapes):
    """np.einsum's subscripts with every axis named, for these operand shapes: '...ij,...jk'
    -> 'aij,ajk->aik' (the Einsum op's rules need explicit subscripts)."""
    return _linalg.explicit_subscripts(subscripts, [tuple(shape) for shape in shapes])


def tensordot_subscripts(shape_a, shape_b, axes=2):
    """np.tensordot(a, b, axes) as einsum subscripts, for these shapes."""
    ndim_a, ndim_b = len(shape_a), len(shape_b)
    if np.ndim(axes) == 0:
        axes_a, axes_b = list(range(ndim_a - int(axes), ndim_a)), list(range(int(axes)))
    else:
        axes_a, axes_b = ([int(i)] if np.ndim(i) == 0 else [int(j) for j in i] for i in axes)
    if len(axes_a) != len(axes_b) or [shape_a[i] for i in axes_a] != [shape_b[j] for j in axes_b]:
        raise ValueError(f"[tensordot] axes {axes!r} do not pair axes of equal size of a {tuple(shape_a)} and "
                         f"b {tuple(shape_b)}. Pair axes of equal size.")
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    term_a = [next(letters) for _ in range(ndim_a)]
    term_b = [next(letters) for _ in range(ndim_b)]
    for i, j in zip(axes_a, axes_b):
        term_b[j % ndim_b] = term_a[i % ndim_a]
    contracted = {term_a[i % ndim_a] for i in axes_a}
    output = [c for c in term_a + term_b if c not in contracted]
    return f"{''.join(term_a)},{''.join(term_b)}->{''.join(output)}"


def diagonal_block(shape, offset=0, axis1=0, axis2=1):
    """The index cutting an array of `shape` to the square block (along axis1, axis2) that
    holds its diagonal number `offset`, as np.diagonal and np.trace read it."""
    ndim = len(shape)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    row0, col0 = max(-offset, 0), max(offset, 0)
    size = max(0, min(shape[axis1] - row0, shape[axis2] - col0))
    index = [slice(None)] * ndim
    index[axis1], index[axis2] = slice(row0, row0 + size), slice(col0, col0 + size)
    return tuple(index)


def diagonal_subscripts(ndim, axis1=0, axis2=1, keep=True):
    """einsum subscripts of np.diagonal (keep: the diagonal becomes the last axis) or np.trace
    (summed) of a square block along axis1, axis2."""
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    letters = "abcdefghijklmnopqrstuvwxy"
    term = ["z" if k in (axis1, axis2) else letters[k] for k in range(ndim)]
    output = [c for k, c in enumerate(term) if k not in (axis1, axis2)] + (["z"] if keep else [])
    return f"{''.join(term)}->{''.join(output)}"


def copy_of(x, *args, **kwargs):
    """np.copy / np.array in the code run on tensors and dual numbers: they are immutable, so
    the value itself (np.array would turn a tensor into a plain array, cutting the tape)."""
    if isinstance(x, _Traced) and not args and not kwargs:
        return x
    return np.array(x, *args, **kwargs)


def pad_pairs(pad_width, x):
    """np.pad's `pad_width` (an int, a pair, or pairs) as one (before, after) pair per axis of x."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (np.ndim(x), 2))
    return tuple((int(before), int(after)) for before, after in widths)


def take_axis(x):
    """The axis of np.take(x, indices) written without one: 0, for a vector x."""
    if np.ndim(x) > 1:
        raise ValueError(f"[GatherV2] np.take(x, indices) without axis flattens x of shape {np.shape(x)}; the "
                         "transformed code supports it for vectors only.\n  Write np.take(np.ravel(x), indices).")
    return 0


def saved(value):
    """A copy of a value about to change in place, pushed before a subscript write or a mutator
    method call (`acc.append(v)`); a loop's backward sweep replays such a call on a copy."""
    if isinstance(value, (np.ndarray, list, dict, set)):
        return value.copy()
    return value


# -- forward mode (tangent code) ------------------------------------------------------------

def check_scalar_output(value, name):
    """The hvp code's check that f returned a scalar: a Hessian is of a scalar function (the
    Hessian of a non-scalar f's sum, 0.0 where that is linear, was returned without a word)."""
    shape = shape_of(value)
    if shape != ():
        raise ValueError(f"[transforms.hvp] {name} returned a value of shape {shape}; a Hessian-vector product "
                         "needs a scalar output.\n  Reduce it first (e.g. return np.sum(y) or np.dot(w, y)), or "
                         "use transforms.jvp of transforms.vjp for vector outputs.")


def broadcast_tangent(t, ans):
    """The tangent `t` of an elementwise result, broadcast to the shape of the result `ans`."""
    shape = np.shape(ans)
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def batch_size(t):
    """The number of directions k of a vector tangent (its leading axis)."""
    k = _batch_of(t)
    if k is None:
        raise ValueError("a vector tangent without an array in it (an empty list's) has no number of "
                         "directions")
    return k


def _batch_of(t):
    """k of a vector tangent, or None where it holds no array: the tangent of an empty list `[]`
    is `[]` in every direction, so it tells nothing of k (nor does a scalar zero)."""
    if isinstance(t, (list, tuple, dict)):
        for item in (t.values() if isinstance(t, dict) else t):
            k = _batch_of(item)
            if k is not None:
                return k
        return None
    return np.shape(t)[0] if np.ndim(t) else None


def broadcast_batch(t, ans, k):
    """A vector tangent of an elementwise result, broadcast to (k, *ans.shape)."""
    shape = (k,) + np.shape(ans)
    t = bt(t, ans) if np.ndim(t) else t
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


def batch_array(t):
    """The vector tangent of a list `[a, b]` read as an array by NumPy: the items' tangents
    (k, ...) stacked after the batch axis, (k, n, ...), so direction j pairs with direction j."""
    if isinstance(t, (list, tuple)):
        return np.stack([batch_array(item) for item in t], axis=1)
    return t


def zeros_batch(x, k, items=False):
    """A zero vector tangent of `x`: k directions. A list or tuple NumPy reads as one array gets
    an array's, unless `items` (a list whose items the code writes: `ys[1] = v` may change an
    item's shape); other lists and tuples (a list of (W, b) pairs) one per item."""
    if isinstance(x, dict):  # (a dict argument's tangent: one per value)
        return {key: zeros_batch(item, k) for key, item in x.items()}
    if isinstance(x, (list, tuple)):
        try:
            if not items:
                return np.zeros((k,) + np.shape(x))  # a list NumPy reads as one array (an operand)
        except ValueError:  # NumPy cannot read it as one array
            pass
        return [zeros_batch(item, k) for item in x]
    return np.zeros((k,) + np.shape(x))


def each(fn, *tangents):
    """Apply a single-direction tangent rule `fn` to each of the k directions, and stack."""
    k = next((k for k in map(_batch_of, tangents) if k is not None), None)
    if k is None:  # only empty lists (and scalar zeros): every direction's row is the same
        row = fn(*tangents)
        if _batch_of(row) is not None or _has_array(row):
            raise ValueError("a vector tangent rule over empty lists gave arrays: the number of "
                             "directions is not known")
        return row
    return _stack_rows([fn(*[_row(t, j) for t in tangents]) for j in range(k)])


def _has_array(t):
    if isinstance(t, (list, tuple, dict)):
        return any(_has_array(x) for x in (t.values() if isinstance(t, dict) else t))
    return bool(np.ndim(t))


def _stack_rows(rows):
    """The k results of a rule, one per direction, as one vector tangent (lists item by item)."""
    if isinstance(rows[0], dict):
        return {key: _stack_rows([r[key] for r in rows]) for key in rows[0]}
    if isinstance(rows[0], (list, tuple)):
        return type(rows[0])(_stack_rows([r[i] for r in rows]) for i in range(len(rows[0])))
    return np.stack(rows)


def _row(t, j):
    if isinstance(t, dict):
        return {key: _row(x, j) for key, x in t.items()}
    if isinstance(t, (list, tuple)):
        return type(t)(_row(x, j) for x in t)
    return t[j] if np.ndim(t) else t


def tangent_item(t, index):
    """`t[index]` of a vector tangent: the batch axis stays in front (lists, tuples and dicts
    hold one tangent per item, and index directly)."""
    if isinstance(t, (list, tuple, dict)):
        return t[index]
    return t[(slice(None),) + (index if isinstance(index, tuple) else (index,))]


def set_tangent_item(t, index, value, x, k):
    """`x[index] = v` with k vector tangents: `t` is x's tangent, `value` v's (0.0 for a
    constant v). A list's tangent holds one tangent per item; an array's has the direction axis
    in front, and v's tangent is lined up with x[index] (`y[[1]] = a`)."""
    if isinstance(t, list):
        t[index] = zeros_batch(x[index], k) if value.__class__ is float and value == 0.0 else value
    else:
        t[batch_index(index)] = bt(value, x[index]) if np.ndim(value) else value


def batch_index(index):
    """The index of a vector tangent for `x[index]`: the batch axis stays in front."""
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))


# -- forward over adjoint code (hvp): tangents of the adjoint helpers ------------------------

def prod_others_tangent(x, dx, axis=None):
    """The tangent of rulekit.prod_others(x, axis) along dx, exact at zeros.

    Per reduced group with c zeros: c == 0, d(p / x_k) = (p / x_k) (sum_j dx_j / x_j - dx_k / x_k);
    c == 1 (a zero at m), slot m gets p' sum_j dx_j / x_j and slot k gets dx_m p' / x_k (p' the
    product of the nonzeros); c == 2, each zero slot gets dx of the other zero times p';
    c > 2, zero.
    """
    x = np.asarray(x)
    dx = np.broadcast_to(dx, np.shape(x))
    zero = x == 0
    count = np.sum(zero, axis=axis, keepdims=True)
    safe = np.where(zero, 1.0, x)
    p = np.prod(safe, axis=axis, keepdims=True)
    ratio = np.where(zero, 0.0, dx / safe)
    total = np.sum(ratio, axis=axis, keepdims=True)
    dzero = np.sum(np.where(zero, dx, 0.0), axis=axis, keepdims=True)
    none = p / safe * (total - ratio)
    one = np.where(zero, p * total, dzero * p / safe)
    two = np.where(zero, p * (dzero - dx), 0.0)
    return np.where(count == 0, none, np.where(count == 1, one, np.where(count == 2, two, 0.0)))


def einsum_vjp_tangent(g, operands, doperands, argnum, subscripts):
    """The tangent of rulekit.einsum_vjp_rows(g, operands, argnum, subscripts) along the
    operands: linear in each operand other than `argnum` (whose value only gives a shape)."""
    total = None
    for j, d in enumerate(doperands):
        if j == argnum or (not isinstance(d, np.ndarray) and d == 0.0):
            continue
        part = einsum_vjp_rows(g, tuple(d if i == j else o for i, o in enumerate(operands)), argnum, subscripts)
        total = part if total is None else total + part
    return total if total is not None else np.zeros(np.shape(operands[argnum]))


# -- vector tangents: one call for k directions on a leading axis ----------------------------

def batch_axis(axis, x):
    """`axis` of `x`, shifted past the leading batch axis of x's vector tangent."""
    ndim = np.ndim(x)
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % ndim + 1 for a in axis)
    return int(axis) % ndim + 1


def batch_axes(axes, x):
    """np.transpose's `axes` for the vector tangent of x: the batch axis stays first."""
    ndim = np.ndim(x)
    axes = range(ndim - 1, -1, -1) if axes is None else axes
    return (0,) + tuple(int(a) % ndim + 1 for a in axes)


def matmul_batch(x, y, dx, dy):
    """The vector tangent of x @ y from vector tangents dx (k, *x.shape) and dy (or None):
    vectors become (1, n) rows and (n, 1) columns, the batch axis one more stack axis."""
    xs, ys = np.shape(x), np.shape(y)
    xm = xs if len(xs) >= 2 else (1,) + xs
    ym = ys if len(ys) >= 2 else ys + (1,)
    ndim = max(len(xm), len(ym))
    total = None
    if dx is not None:
        k = np.shape(dx)[0]
        total = np.reshape(dx, (k,) + (1,) * (ndim - len(xm)) + xm) @ np.reshape(y, ym)
    if dy is not None:
        k = np.shape(dy)[0]
        part = np.reshape(x, xm) @ np.reshape(dy, (k,) + (1,) * (ndim - len(ym)) + ym)
        total = part if total is None else total + part
    return np.reshape(total, (k,) + _matmul_shape(xs, ys))


def _matmul_shape(xs, ys):
    if len(xs) == 1 and len(ys) == 1:
        return ()
    if len(xs) == 1:
        return tuple(ys[:-2]) + (ys[-1],)
    if len(ys) == 1:
        return tuple(xs[:-1])
    return tuple(np.broadcast_shapes(xs[:-2], ys[:-2])) + (xs[-2], ys[-1])


def rows(helper, g, *args):
    """An adjoint helper (unbroadcast, unreduce, matmul_cotangent_x, ...) applied to a
    cotangent tangent with one leading axis of k directions."""
    before = _rulekit.BATCH_NDIM[0]
    _rulekit.BATCH_NDIM[0] = 1
    try:
        return helper(g, *args)
    finally:
        _rulekit.BATCH_NDIM[0] = before
