"""Indexing: NumPy's `x[index]` (basic, advanced and boolean), TF's gather, and one_hot.

The index is static metadata, normalized once by `getitem`: a tuple of ints, slices with
int bounds, None, Ellipsis and read-only integer arrays (a boolean mask becomes its
`nonzero()` arrays, exactly NumPy's meaning; tensors used as indices become arrays).
The VJP scatters the cotangent into zeros with `unindex`, which adds with `np.add.at`
semantics, so an element picked twice by a fancy index gets both contributions.
"""

import operator

import numpy as np

from ..core import dnp
from ..core.duck import is_duck_array, primal_of, refuse_compute
from ..core.registry import LINEAR, NOT_DIFFERENTIABLE, Traced, defop
from ..core.rulekit import axis_index, index_rows, unindex_like

__all__ = ["getitem", "unindex", "take", "gather", "one_hot"]


def _getitem(x, *, index):
    return x[index] if is_duck_array(x) else np.asarray(x)[index]  # a dask array stays lazy


def getitem_vjp(g, ans, x, *, index):
    return unindex_like(g, x, index)


def _sample_basic(rng):
    return (rng.standard_normal((4, 5, 3)),), {"index": (slice(1, None, 2), Ellipsis, None, -1)}


def _sample_reversed(rng):
    return (rng.standard_normal((5, 4)),), {"index": (slice(None, None, -2), slice(1, 3))}


def _sample_scalar(rng):
    return (rng.standard_normal((3, 4)),), {"index": (1, -2)}


def _sample_fancy_repeats(rng):
    return (rng.standard_normal((4, 3)),), {"index": _normalize_index([0, 2, 0, -1, 2])}


def _sample_fancy_mixed(rng):
    return (rng.standard_normal((3, 4, 5)),), {"index": _normalize_index(
        (np.array([[0, 1], [1, 1]]), slice(None), np.array([4, 4])))}


def _sample_mask(rng):
    return (rng.standard_normal((3, 4)),), {"index": _normalize_index(
        np.array([[True, False, True, True], [False] * 4, [True, True, False, True]]))}


def _sample_mask_rows(rng):
    return (rng.standard_normal((4, 2)),), {"index": _normalize_index(
        (np.array([True, False, True, True]), 1))}


GETITEM = defop("StridedSlice", _getitem, vjp=getitem_vjp, jvp=LINEAR, batch_vjp=True,
                samples=(_sample_basic, _sample_reversed, _sample_scalar, _sample_fancy_repeats,
                         _sample_fancy_mixed, _sample_mask, _sample_mask_rows), complex=True)


def _unindex(g, *, shape, index):
    if is_duck_array(g):
        return _unindex_lazy(g, shape, index)
    out = np.zeros(shape, dtype=np.result_type(g))
    if _is_basic(index):
        out[index] = g  # a basic index never picks an element twice
    else:
        np.add.at(out, index, g)  # repeated fancy indices accumulate
    return out


def _unindex_lazy(g, shape, index):
    """getitem's adjoint for a dask cotangent: lazy zeros, written lazily at a basic index."""
    if not _is_basic(index):
        raise refuse_compute("StridedSliceGrad", g, "The adjoint of an integer-array (or boolean) index "
                             "scatters with np.add.at, which dask has no lazy version of. Index the dask "
                             "data with slices, or compute it (x.compute()) before differentiating.")
    out = np.zeros_like(g, shape=shape)
    out[index] = g  # dask's lazy assignment
    return out


def unindex_vjp(g, ans, cotangent, *, shape, index):
    return index_rows(g, index)


def _sample_unindex(rng):
    return (rng.standard_normal((2, 3)),), {"shape": (4, 3), "index": _normalize_index([1, 1])}


def _sample_unindex_basic(rng):
    return (rng.standard_normal((2, 2)),), {"shape": (3, 4), "index": (slice(1, None), slice(0, 4, 2))}


STRIDED_SLICE_GRAD = defop("StridedSliceGrad", _unindex, vjp=unindex_vjp, jvp=LINEAR, batch_vjp=True,
                           samples=(_sample_unindex, _sample_unindex_basic), complex=True)


def _gather(params, indices, *, axis):
    return np.take(params, indices, axis=axis)


def gather_vjp(g, ans, params, indices, *, axis):
    return unindex_like(g, params, axis_index(np.ndim(params), axis, indices))


def _sample_gather(rng):
    return (rng.standard_normal((4, 3)), np.array([3, 0, 3, 1])), {"axis": 0}


def _sample_gather_matrix_indices(rng):
    return (rng.standard_normal((2, 5, 3)), np.array([[0, 4], [4, 2], [1, 1]])), {"axis": 1}


def _sample_gather_scalar_index(rng):
    return (rng.standard_normal((3, 4)), np.array(2)), {"axis": 1}


GATHER = defop("GatherV2", _gather, vjp=(gather_vjp, None), jvp=LINEAR, nondiff_argnums=(1,),
               batch_vjp=True,
               samples=(_sample_gather, _sample_gather_matrix_indices, _sample_gather_scalar_index), complex=True)


def _one_hot(indices, *, depth, on_value, off_value, axis, dtype):
    hot = np.expand_dims(np.asarray(indices), -1) == np.arange(depth)
    return np.moveaxis(np.where(hot, on_value, off_value).astype(dtype), -1, axis)


ONE_HOT = defop("OneHot", _one_hot, vjp=NOT_DIFFERENTIABLE, jvp=NOT_DIFFERENTIABLE)


# -- index normalization ----------------------------------------------------------------------

def _is_basic(index):
    return not any(isinstance(item, np.ndarray) for item in index)


def _int_array(value):
    array = np.array(value, dtype=np.intp)
    array.flags.writeable = False
    return array


def _normalize_index(index):
    """`index` as a tuple NumPy reads the same way, holding no tensors, lists or masks."""
    items = index if isinstance(index, tuple) else (index,)
    result = []
    for item in items:
        if is_duck_array(primal_of(item)):  # np.asarray would compute it
            raise refuse_compute("StridedSlice", primal_of(item), "An index array decides the result's "
                                 "shape, so it must be concrete: compute it first (mask.compute()), or keep "
                                 "the shape with np.where(mask, x, 0).")
        if isinstance(item, Traced):
            item = np.asarray(item)
        if item is None or item is Ellipsis:
            result.append(item)
        elif isinstance(item, slice):
            result.append(slice(*(None if v is None else operator.index(v)
                                  for v in (item.start, item.stop, item.step))))
        elif isinstance(item, (bool, np.bool_)):
            result.append(bool(item))
        elif isinstance(item, (int, np.integer)):
            result.append(int(item))
        else:
            array = np.asarray(item)
            if array.dtype == np.bool_ and array.ndim > 0:
                result.extend(_int_array(i) for i in array.nonzero())
            elif array.dtype == np.bool_:
                result.append(bool(array))
            elif array.dtype.kind in "iu" and array.ndim == 0:
                result.append(int(array))
            elif array.dtype.kind in "iu" or array.size == 0:
                result.append(_int_array(array))
            else:
                raise IndexError(f"[StridedSlice] only integers, slices (`:`), ellipsis (`...`), "
                                 f"None and integer or boolean arrays are valid indices, got "
                                 f"{type(item).__name__} of dtype {array.dtype}. Cast the index "
                                 "to an integer type.")
    return tuple(result)


# -- public functions -------------------------------------------------------------------------

def getitem(x, index):
    """x[index] with NumPy's semantics, differentiable in x.

    >>> dnp.getitem(np.arange(5.0), [0, 0, 3])
    array([0., 0., 3.])
    """
    items = index if index.__class__ is tuple else (index,)
    for item in items:
        if isinstance(item, Traced) and getattr(item, "batch_size", None) is not None:
            return item.index_into(x, items)  # an index array that differs per vmap example (batching/)
    return GETITEM(x, index=_normalize_index(index))


def unindex(g, shape, index):
    """The adjoint of getitem: zeros of `shape` with `g` added at `index` (np.add.at)."""
    return STRIDED_SLICE_GRAD(g, shape=tuple(int(n) for n in shape), index=_normalize_index(index))


def _indices(indices):
    return indices if isinstance(indices, Traced) else _int_array(indices)


def take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("[take] out= is not supported on differentiable values; use the result.")
    if axis is None:
        a, axis = dnp.ravel(a), 0
    axis = int(axis) % max(np.ndim(a), 1)
    if mode != "raise":
        n = np.shape(a)[axis]
        indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1)
    return GATHER(a, _indices(indices), axis=axis)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """TF's tf.gather: slices of `params` along `axis` at `indices` (np.take's semantics)."""
    if batch_dims != 0:
        raise NotImplementedError("[GatherV2] batch_dims != 0 is not supported. Gather inside a "
                                  "loop over the batch, or use getitem with index arrays.")
    ndim = np.ndim(params)
    axis = 0 if axis is None else int(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"[GatherV2] axis {axis} is out of range for params of rank {ndim}. "
                         f"Use an axis in [-{ndim}, {ndim}).")
    return GATHER(params, _indices(indices), axis=axis % max(ndim, 1))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """TF's tf.one_hot: not differentiable; float32 unless `dtype` or the values say otherwise."""
    if dtype is None:
        given = on_value if on_value is not None else off_value
        dtype = np.float32 if given is None else dnp.result_dtype(given)
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    on = 1 if on_value is None else np.asarray(on_value).item()
    off = 0 if off_value is None else np.asarray(off_value).item()
    ndim = np.ndim(indices) + 1
    axis = -1 if axis is None else int(axis)
    if not -1 <= axis < ndim:
        raise ValueError(f"[OneHot] Expected axis to be -1 or between [0, {ndim}). But received: {axis}")
    return ONE_HOT(indices, depth=int(depth), on_value=on, off_value=off, axis=axis % ndim, dtype=dtype)

dnp.export(globals())
