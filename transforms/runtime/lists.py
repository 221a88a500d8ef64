"""Adjoints and tangents of Python's list operators in generated code: `ys + [v]` is list
concatenation and `[v] * 2` repetition, not NumPy's elementwise add and product. The
normalizer marks a `+` / `*` with a list operand (a list display, or a name bound to one) as
a "listop"; these helpers check the operands at run time, so a name that holds an array there
gets NumPy's rules. Also `zeros_like` and `accumulate` (adjoints that may be lists), `zero_slot`
(a written list item's adjoint) and `bt` (a vector tangent lined up with an elementwise result). Plain code on plain values (`df.save`
copies it)."""

import numpy as np

from dualtape.core.registry import Traced as _Traced
from dualtape.core.rulekit import shape_of, unbroadcast


def accumulate(b, g):
    """`b + g` for adjoints that may be lists (adjoints of lists and tuples)."""
    if isinstance(b, list):
        if isinstance(g, (list, tuple)) or (isinstance(g, np.ndarray) and g.ndim and len(g) == len(b)):
            return [accumulate(x, y) for x, y in zip(b, g)]  # (an array: the list read by NumPy, row k item k's)
        return [x + g for x in b]
    if isinstance(g, list):
        return [b + y for y in g]
    if isinstance(b, dict):
        return {key: accumulate(item, g[key]) if isinstance(g, dict) else accumulate(item, g) for key, item in b.items()}
    return b + g


def _is_count(n):
    return isinstance(n, (int, np.integer)) and not isinstance(n, bool)


def list_add_adjoint(g, a, b, which):
    """The adjoint of operand `which` (0: a, 1: b) of `a + b`: its items of the concatenation's
    adjoint for two lists (tuples), else NumPy's sum's (unbroadcast)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(g[:len(a)]) if which == 0 else list(g[len(a):])
    return unbroadcast(g, np.shape(a if which == 0 else b))


def list_mul_adjoint(g, a, b, which):
    """The adjoint of operand `which` of `a * b`: for a list repeated by a count, the sum of
    its copies' adjoints, item by item; else NumPy's product's (the other operand is not
    differentiated, so this is linear in g)."""
    seq, count = (a, b) if which == 0 else (b, a)
    if isinstance(seq, (list, tuple)) and _is_count(count):
        size = len(seq)
        out = [0.0] * size
        for k, item in enumerate(g):
            out[k % size] = accumulate(out[k % size], item)
        return out
    return unbroadcast(g * count, np.shape(seq))


def list_op_tangent(da, db, a, b, ans, op, batched):
    """The tangent of `ans = a + b` or `a * b` (op "+" or "*") where a list operand is possible:
    the tangents' concatenation or repetition for lists, else NumPy's rule (`batched`: vector
    tangents with a leading direction axis, lined up with ans as `bt` does)."""
    if op == "+" and isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        items = _items(da, a, batched) + _items(db, b, batched)
        return tuple(items) if isinstance(ans, tuple) else items
    if op == "*" and isinstance(a, (list, tuple)) and _is_count(b):
        return _items(da, a, batched) * int(b)
    if op == "*" and isinstance(b, (list, tuple)) and _is_count(a):
        return _items(db, b, batched) * int(a)
    if batched:
        da, db = bt(da, ans), bt(db, ans)
    return da + db if op == "+" else da * b + a * db


def zeros_like(x):
    """A zero adjoint for `x`: 0.0 for scalars, float zeros for arrays (and for tensors and dual
    numbers, by their shape), a list for sequences."""
    if isinstance(x, (list, tuple)):
        return [zeros_like(item) for item in x]
    if isinstance(x, dict):  # a dict argument (`d['a'] * d['b']`): one adjoint per key
        return {key: zeros_like(item) for key, item in x.items()}
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "fc" else float)
    if isinstance(x, _Traced):
        shape = shape_of(x)
        return np.zeros(shape) if shape else 0.0
    return 0.0


def zero_slot(b, index, x):
    """The adjoint `b` of `x` after the backward of `x[index] = v`, x's old item restored: the
    slot starts again from zero, shaped like the restored item for a list (its items may change
    shape; a plain 0.0 reached later adjoints as a scalar), 0.0 into an array's slice (a new
    value for a tensor's or dual number's)."""
    if isinstance(b, list):
        b[index] = zeros_like(x[index])
    elif isinstance(b, _Traced):  # tensors and dual numbers are immutable: a new value
        keep = np.ones(shape_of(b))
        keep[index] = 0.0
        return b * keep
    else:
        b[index] = 0.0
    return b


def _items(t, x, batched):
    """A list's tangent as one tangent per item: vector tangents of a list NumPy reads as one
    array may be one array, the direction axis in front."""
    if isinstance(t, (list, tuple)):
        return list(t)
    if batched:
        return [t[:, i] for i in range(len(x))]
    return [t[i] for i in range(len(x))]


def bt(t, ans):
    """A vector tangent (k, *x.shape) lined up with the result `ans` of an elementwise op:
    (k, 1, ..., *x.shape), so broadcasting pairs direction j with direction j."""
    ndim, out = np.ndim(t) - 1, np.ndim(ans)
    if ndim < 0 or ndim >= out:
        return t
    shape = np.shape(t)
    return np.reshape(t, shape[:1] + (1,) * (out - ndim) + shape[1:])


def sequence_adjoint(g, xs, axis, kind):
    """The adjoint of the list `xs` in `np.stack(xs, axis)`, `np.concatenate(xs, axis)` or
    `np.vstack(xs)` (kind "stack", "concatenate" or "vstack"): one piece of `g` per item, shaped
    like the item."""
    if kind == "stack":
        return [np.reshape(np.take(g, i, axis=axis), np.shape(x)) for i, x in enumerate(xs)]
    if kind == "vstack":  # (the items as rows: a 1-d item is one row)
        ends = np.cumsum([np.shape(x)[0] if np.ndim(x) >= 2 else 1 for x in xs])
        return [np.reshape(piece, np.shape(x)) for piece, x in zip(np.split(g, ends[:-1], axis=0), xs)]
    ends = np.cumsum([np.shape(x)[axis] for x in xs])
    return list(np.split(g, ends[:-1], axis=axis))


def sequence_tangent(t, xs, axis, kind, batched):
    """The tangent of `np.stack(xs, axis)` / `np.concatenate(xs, axis)` from the list's tangent
    `t` (one tangent per item; zero items broadcast to their item's shape); `batched`: vector
    tangents, the direction axis in front."""
    items = _items(t, xs, batched)
    if batched:
        count = next((np.shape(d)[0] for d, x in zip(items, xs) if np.ndim(d) > np.ndim(x)), 1)
        items = [np.broadcast_to(d, (count,) + np.shape(x)) for d, x in zip(items, xs)]
        axis = axis + 1 if axis >= 0 else axis
    else:
        items = [np.broadcast_to(d, np.shape(x)) for d, x in zip(items, xs)]
    if kind == "vstack":  # (each item's tangent as its rows, after the direction axis if any)
        lead = np.shape(items[0])[:1] if batched else ()
        items = [np.reshape(d, lead + (1,) * max(0, 2 - np.ndim(x)) + np.shape(x)) for d, x in zip(items, xs)]
        return np.concatenate(items, 1 if batched else 0)
    return np.stack(items, axis) if kind == "stack" else np.concatenate(items, axis)


def sorted_order(items, reverse=False):
    """The positions of `items` in the order `sorted(items, reverse=reverse)` puts them (a
    stable sort by Python's comparisons, as sorted's): sorted(xs) is [xs[k] for k in it]."""
    return sorted(range(len(items)), key=items.__getitem__, reverse=reverse)


def key_list(keys, count=None):
    """The keys of a dict built at run time (`{k: f(v) for k, v in p.items()}`,
    `dict(zip(names, values))`), as a list: plain values, never differentiated. A
    comprehension's keys and values are computed by two passes over its iterables: `count`
    values were made, and as many keys must be."""
    keys = list(keys)
    if count is not None and len(keys) != count:
        raise ValueError(f"a dict comprehension gave {count} values but {len(keys)} keys: the transformer reads "
                         "its iterables twice (keys, then values), and one of them can be read once only (an "
                         "iterator held by a name); make it a list first: items = list(items)")
    return keys


def dict_keys(d):
    """The keys of the dict a loop reads (`for k, v in d.items()`), as a list; the transformer
    took `d` for a dict from the source (`d["w"]`, `d.items()`), so anything else is an error,
    never a loop over other items."""
    if not isinstance(d, dict):
        raise TypeError(f"a loop over the keys of a dict met a {type(d).__name__}: the transformer reads this "
                        "name as a dict (it is read with a string key or a dict method); pass a dict, or give "
                        "the dict and the sequence different names")
    return list(d)


def dict_adjoint(g, keys, values):
    """The adjoint of the values list of `dict(zip(keys, values))` from the dict's adjoint `g`:
    one item per value, zeros for a key `g` lacks and for a value a later repeat of its key
    replaced (the dict keeps the last)."""
    keys = list(keys)[:len(values)]  # (zip stops at the shorter: values past the keys get zeros)
    last = {key: i for i, key in enumerate(keys)}
    return [g[keys[i]] if i < len(keys) and last[keys[i]] == i and isinstance(g, dict) and keys[i] in g
            else zeros_like(value) for i, value in enumerate(values)]


def dict_tangent(t, keys, values, batched):
    """The tangent of `dict(zip(keys, values))` from the values list's tangent `t`: a dict of
    the items' tangents (`batched`: vector tangents, the direction axis in front)."""
    return dict(zip(keys, _items(t, values, batched)))
