"""Sorting, searching, comparing, convolution and interpolation of NumPy.

sort and partition are differentiable through their permutation: the cotangent is put back
where each element came from (sort: the stable permutation, so tied values keep their order;
partition: np.argpartition's). argsort, argpartition, searchsorted, isclose and allclose
have no derivative and accept traced values. convolve / correlate are bilinear (1-d);
interp is differentiable in x (the slope of the segment holding x) and in fp (linear).
"""

import numpy as np

from ..core import dnp
from ..core.registry import NOT_DIFFERENTIABLE, defop, elementwise_op
from ..core.rulekit import convolve_vjp, interp_slope, interp_weights, primal_of, sort_index, unindex_like

__all__ = ["sort", "partition", "argsort", "argpartition", "searchsorted", "isclose", "allclose",
           "convolve", "correlate", "interp", "select", "piecewise"]


def _normal(rng, *shapes):
    return tuple(rng.standard_normal(s) for s in shapes)


# -- sort, partition ------------------------------------------------------------------------------

def _sort(x, *, axis=-1):
    return np.sort(x, axis=axis, kind="stable")


def sort_vjp(g, ans, x, *, axis=-1):
    return unindex_like(g, x, sort_index(x, axis))


def sort_jvp(dx, ans, x, *, axis=-1):
    return dnp.getitem(dx, sort_index(x, axis))


def _sample_sort(rng):
    return _normal(rng, (3, 4)), {}


def _sample_sort_axis(rng):
    return _normal(rng, (3, 4)), {"axis": 0}


def _sample_sort_flat(rng):
    return _normal(rng, (2, 3)), {"axis": None}


SORT = defop("Sort", _sort, vjp=sort_vjp, jvp=sort_jvp,
             samples=(_sample_sort, _sample_sort_axis, _sample_sort_flat))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise TypeError("[Sort] order= (structured arrays) is not supported on differentiable values.")
    return SORT(a, axis=axis)


def _partition(x, *, kth, axis=-1):
    return np.asarray(x)[sort_index(x, axis, kth)]


def partition_vjp(g, ans, x, *, kth, axis=-1):
    return unindex_like(g, x, sort_index(x, axis, kth))


def partition_jvp(dx, ans, x, *, kth, axis=-1):
    return dnp.getitem(dx, sort_index(x, axis, kth))


def _sample_partition(rng):
    return _normal(rng, (3, 5)), {"kth": 2}


def _sample_partition_axis(rng):
    return _normal(rng, (4, 3)), {"kth": (0, 3), "axis": 0}


PARTITION = defop("Partition", _partition, vjp=partition_vjp, jvp=partition_jvp,
                  samples=(_sample_partition, _sample_partition_axis))


def partition(a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise TypeError("[Partition] order= (structured arrays) is not supported on differentiable values.")
    return PARTITION(a, kth=kth, axis=axis)


# -- no derivative, traced values accepted ------------------------------------------------------------

def _argsort(x, *, axis=-1, kind=None):
    return np.argsort(x, axis=axis, kind=kind)


def _argpartition(x, *, kth, axis=-1):
    return np.argpartition(x, kth, axis=axis)


def _searchsorted(a, v, *, side="left"):
    return np.searchsorted(a, v, side=side)


def _allclose(a, b, *, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _isclose(a, b, *, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _sample_search(rng):
    return (np.sort(rng.standard_normal(5)), rng.standard_normal(3)), {"side": "right"}


def _sample_pair(rng):
    a = rng.standard_normal((2, 3))
    return (a, a + 1e-9), {}


ARGSORT = defop("ArgSort", _argsort, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, samples=(_sample_sort,))
ARGPARTITION = defop("ArgPartition", _argpartition, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE,
                     samples=(_sample_partition,))
SEARCHSORTED = defop("SearchSorted", _searchsorted, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE,
                     samples=(_sample_search,))
ALLCLOSE = defop("AllClose", _allclose, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE, samples=(_sample_pair,))
ISCLOSE = elementwise_op("IsClose", _isclose, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    return ARGSORT(a, axis=axis, kind="stable" if stable else kind)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return ARGPARTITION(a, kth=kth, axis=axis)


def searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        a = dnp.getitem(a, np.asarray(sorter))
    return SEARCHSORTED(a, v, side=side)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(ALLCLOSE(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return ISCLOSE(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


# -- convolve, correlate ---------------------------------------------------------------------------

def _convolve(a, v, *, mode="full"):
    return np.convolve(a, v, mode=mode)


def convolve_vjp_a(g, ans, a, v, *, mode="full"):
    return convolve_vjp(g, a, v, mode, 0)


def convolve_vjp_v(g, ans, a, v, *, mode="full"):
    return convolve_vjp(g, a, v, mode, 1)


def convolve_jvp_a(da, ans, a, v, *, mode="full"):
    return dnp.convolve(da, v, mode=mode)


def convolve_jvp_v(dv, ans, a, v, *, mode="full"):
    return dnp.convolve(a, dv, mode=mode)


def _sample_conv(mode, n, m):
    def sample(rng):
        return _normal(rng, n, m), {"mode": mode}
    sample.__name__ = sample.__qualname__ = f"_sample_{mode}_{n}_{m}"
    return sample


CONV_SAMPLES = tuple(_sample_conv(mode, n, m) for mode in ("full", "same", "valid") for n, m in ((5, 3), (2, 4)))
CONVOLVE = defop("Convolve", _convolve, vjp=(convolve_vjp_a, convolve_vjp_v),
                 jvp=(convolve_jvp_a, convolve_jvp_v), samples=CONV_SAMPLES, complex=True)


def convolve(a, v, mode="full"):
    return CONVOLVE(a, v, mode=mode)


def _correlate(a, v, *, mode="valid"):
    return np.correlate(a, v, mode=mode)


def correlate_vjp_a(g, ans, a, v, *, mode="valid"):
    return convolve_vjp(g, a, dnp.flip(v), mode, 0, True)


def correlate_vjp_v(g, ans, a, v, *, mode="valid"):
    return dnp.flip(convolve_vjp(g, a, dnp.flip(v), mode, 1, True))


def correlate_jvp_a(da, ans, a, v, *, mode="valid"):
    return dnp.correlate(da, v, mode=mode)


def correlate_jvp_v(dv, ans, a, v, *, mode="valid"):
    return dnp.correlate(a, dv, mode=mode)


CORRELATE = defop("Correlate", _correlate, vjp=(correlate_vjp_a, correlate_vjp_v),
                  jvp=(correlate_jvp_a, correlate_jvp_v), samples=CONV_SAMPLES)


def correlate(a, v, mode="valid"):
    return CORRELATE(a, v, mode=mode)


# -- interp, select ------------------------------------------------------------------------------

def _interp(x, xp, fp):
    return np.interp(x, xp, fp).astype(np.result_type(np.asarray(x), np.asarray(fp), np.float16))  # float32 stays


def interp_vjp_x(g, ans, x, xp, fp):
    return g * interp_slope(x, xp, fp)


def interp_vjp_fp(g, ans, x, xp, fp):
    return dnp.tensordot(interp_weights(x, xp), g, axes=np.ndim(x))


def interp_jvp_x(dx, ans, x, xp, fp):
    return dx * interp_slope(x, xp, fp)


def interp_jvp_fp(dfp, ans, x, xp, fp):
    return dnp.tensordot(dfp, interp_weights(x, xp), axes=1)


def _sample_interp(rng):
    xp = np.array([-2.0, -0.5, 0.4, 1.0, 2.5])
    x = np.array([[-1.9, -1.0, 0.0], [0.7, 2.0, 3.0]])  # the last one outside: slope 0
    return (x, xp, rng.standard_normal(5)), {}


INTERP = defop("Interp", _interp, vjp=(interp_vjp_x, None, interp_vjp_fp),
               jvp=(interp_jvp_x, None, interp_jvp_fp), samples=(_sample_interp,))


def interp(x, xp, fp, left=None, right=None, period=None):
    if left is not None or right is not None or period is not None:
        raise TypeError("[Interp] left=, right= and period= are not supported on differentiable values.")
    return INTERP(x, xp, fp)


def select(condlist, choicelist, default=0):
    """np.select as nested `where`s (the first true condition wins): runtime modes only."""
    result = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        result = dnp.where(cond, choice, result)
    return result


def piecewise(x, condlist, funclist, *args, **kw):
    """np.piecewise: each function (or constant) on the elements its condition selects, as
    NumPy (a later condition wins where several hold; zeros where none and no default).
    Each piece is computed on its elements only (getitem) and put back (unindex), so a
    function invalid elsewhere (np.log of negatives) gives no NaN gradient: runtime modes."""
    shape = tuple(np.shape(x))
    conds = [np.broadcast_to(primal_of(c).astype(bool), shape) for c in
             (condlist if isinstance(condlist, (list, tuple)) else [condlist])]
    if len(funclist) == len(conds) + 1:  # the last function: where no condition holds
        conds.append(~np.any(conds, axis=0) if conds else np.ones(shape, bool))
    taken = np.zeros(shape, bool)
    result = None
    for cond, fn in reversed(list(zip(conds, funclist))):
        cond = cond & ~taken
        taken |= cond
        index = np.nonzero(cond)
        piece = fn(dnp.getitem(x, index), *args, **kw) if callable(fn) else np.full(len(index[0]), fn, dtype=float)
        piece = dnp.unindex(piece * np.ones(len(index[0]), dtype=dnp.result_dtype(x)), shape, index)
        result = piece if result is None else result + piece
    return result if result is not None else dnp.zeros_like(x)


dnp.export(globals())
