"""Running an op once per example of a vmap batch: the fallback batching rule (`loop`), the
VJP and JVP rules that compute plain values from their inputs (`per_example`), and an index
that differs per example (`batched_getitem`). Each stacks the examples' results, or says
that their shapes differ."""

import numpy as np

from ..core import apply_rules, dnp
from ..core.errors import RefusalError
from ..core.rulekit.shapes import shape_of
from .batched import Batched


def _item(v, i):
    return v[i] if v.__class__ is np.ndarray else dnp.getitem(v, i)


def _example(v, level, i):
    """Example i of `v` when vmap `level` batches it; else `v`, the same for every example."""
    return _item(v._value, i) if v.__class__ is Batched and v.level == level else v


def _newest(values):
    """(level, batch size) of the newest vmap batching one of `values`, or (None, None)."""
    level = size = None
    for v in values:
        if v.__class__ is Batched and (level is None or v.level > level):
            level, size = v.level, v.batch_size
    return level, size


def loop(op, values, batched, static, size, level=None):
    """The op once per example, the results stacked: right for every op. `level`: the vmap
    whose batched values in `static` (an index) are taken per example too."""
    outs = []
    for i in range(size):
        args = [_item(v, i) if b else v for v, b in zip(values, batched)]
        st = _static_at(static, level, i) if level is not None else static
        outs.append(op(*args, **st))
    return _stack(outs, op.name)


def _stack(outs, name):
    """The examples' results on a new leading axis, or an error when their shapes differ."""
    shapes = {tuple(dnp.shape(o)) for o in outs}
    if len(shapes) > 1:
        raise RefusalError(f"[{name}] gives results of different shapes for the examples of a vmap "
                           f"batch ({sorted(shapes)}): its result's shape depends on the values, so it "
                           "cannot be batched. Compute it outside vmap, or pad to one shape.")
    if all(o.__class__ is np.ndarray or isinstance(o, np.generic) for o in outs):
        return np.stack(outs)
    return dnp.stack(outs)


def _static_leaves(static):
    for v in static.values():
        if isinstance(v, (tuple, list)):
            yield from v
        else:
            yield v


def static_batch(static, level):
    """The batch size when a static argument (an index) holds a value batched at `level`."""
    for v in _static_leaves(static):
        if v.__class__ is Batched and v.level == level:
            return v.batch_size
    return None


def _static_at(static, level, i):
    out = {}
    for k, v in static.items():
        if isinstance(v, (tuple, list)):
            out[k] = type(v)(_example(item, level, i) for item in v)
        else:
            out[k] = _example(v, level, i)
    return out


# -- rules that run once per example -------------------------------------------------------

def per_example(rule, args, n_parts):
    """`rule(*args)` (a VJP or JVP rule's application) once per example of the newest vmap
    level among `args`, each part stacked; None when no argument is batched."""
    level, size = _newest(args)
    if level is None:
        return None
    rows = [rule(*[_example(a, level, i) for a in args]) for i in range(size)]
    parts = []
    for j in range(n_parts):
        column = [row[j] for row in rows]
        if all(c is None for c in column):
            parts.append(None)
            continue
        like = next(c for c in column if c is not None)
        column = [np.zeros(tuple(dnp.shape(like)), dnp.result_dtype(like)) if c is None else c for c in column]
        parts.append(Batched(_stack(column, "per-example rule"), level, size))
    return parts


apply_rules.per_example[0] = per_example

# -- an index that differs per example -----------------------------------------------------

def batched_getitem(x, index):
    """x[index] where `index` holds arrays batched by a vmap (an embedding lookup, a gather of
    each example's own rows): one fancy index for the whole batch when the batched array is
    the only index, else once per example."""
    level, size = _newest((x,) + tuple(index))
    if len(index) == 1 and index[0].level == level and dnp.result_dtype(index[0]).kind in "iu":
        idx = index[0]._value
        if not (x.__class__ is Batched and x.level == level):  # the same array for every example
            return Batched(dnp.getitem(x, idx), level, size)
        rows = np.arange(size).reshape((size,) + (1,) * (len(shape_of(idx)) - 1))
        return Batched(dnp.getitem(x._value, (rows, idx)), level, size)
    outs = [dnp.getitem(_example(x, level, i), tuple(_example(v, level, i) for v in index)) for i in range(size)]
    return Batched(_stack(outs, "StridedSlice"), level, size)


Batched.index_into = lambda self, x, index: batched_getitem(x, index)  # (ops/indexing.getitem calls it)
