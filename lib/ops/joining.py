"""Joining and splitting: the ConcatV2 and Pack primitives (`concatenate`, `stack`) and the
public `split` / `array_split`, which slice with `getitem`. Linear, like every shape op
(see `shape`)."""

import numpy as np

from ..core import dnp
from ..core.registry import LINEAR, defop
from ..core.rulekit import axis_index, concat_piece, negative_axis
from .shape import checked_axes, ravel

__all__ = ["concatenate", "stack", "split", "array_split"]


def _concatenate(*arrays, axis):
    return np.concatenate(arrays, axis=axis)


def concat_vjp(g, ans, *arrays, argnum, axis):
    return concat_piece(g, arrays, argnum, negative_axis(axis, np.ndim(ans)))


def _sample_concat(rng):
    return (rng.standard_normal((2, 3)), rng.standard_normal((2, 1)),
            rng.standard_normal((2, 2))), {"axis": 1}


def _sample_concat_rows(rng):
    return (rng.standard_normal((1, 3, 2)), rng.standard_normal((2, 3, 2))), {"axis": 0}


def _sample_concat_vectors(rng):
    return (rng.standard_normal(3), rng.standard_normal(4)), {"axis": 0}


CONCAT = defop("ConcatV2", _concatenate, vjp=concat_vjp, jvp=LINEAR, variadic=True, batch_vjp=True,
               samples=(_sample_concat, _sample_concat_rows, _sample_concat_vectors), complex=True)


def _stack(*arrays, axis):
    return np.stack(arrays, axis=axis)


def stack_vjp(g, ans, *arrays, argnum, axis):
    return dnp.getitem(g, axis_index(np.ndim(g), negative_axis(axis, np.ndim(ans)), argnum))


def _sample_stack(rng):
    return (rng.standard_normal((2, 3)), rng.standard_normal((2, 3))), {"axis": 2}


def _sample_stack_scalars(rng):
    return (rng.standard_normal(()), rng.standard_normal(()), rng.standard_normal(())), {"axis": 0}


def _sample_stack_middle(rng):
    return (rng.standard_normal((2, 4)), rng.standard_normal((2, 4))), {"axis": 1}


PACK = defop("Pack", _stack, vjp=stack_vjp, jvp=LINEAR, variadic=True, batch_vjp=True,
             samples=(_sample_stack, _sample_stack_scalars, _sample_stack_middle), complex=True)


def _no_out(api, out=None, dtype=None):
    if out is not None or dtype is not None:
        raise TypeError(f"[{api}] out= and dtype= are not supported on differentiable values. "
                        "Use the returned value, and dnp.cast for another dtype.")


def concatenate(arrays, axis=0, out=None, dtype=None, casting=None):
    _no_out("concatenate", out, dtype)
    arrays = tuple(arrays)
    if not arrays:
        raise ValueError("[ConcatV2] need at least one array to concatenate.")
    if axis is None:
        return CONCAT(*[ravel(a) for a in arrays], axis=0)
    ndim = np.ndim(arrays[0])
    if ndim == 0:
        raise ValueError("[ConcatV2] zero-dimensional arrays cannot be concatenated. Use stack.")
    return CONCAT(*arrays, axis=checked_axes(axis, ndim, "ConcatV2")[0])


def stack(arrays, axis=0, out=None, dtype=None, casting=None):
    _no_out("stack", out, dtype)
    arrays = tuple(arrays)
    if not arrays:
        raise ValueError("[Pack] need at least one array to stack.")
    shapes = {tuple(np.shape(a)) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"[Pack] all input arrays must have the same shape, got {sorted(shapes)}.")
    return PACK(*arrays, axis=checked_axes(axis, np.ndim(arrays[0]) + 1, "Pack")[0])


def array_split(ary, indices_or_sections, axis=0):
    """Split along `axis` into pieces, each a slice of `ary` (one `getitem` per piece)."""
    ndim = np.ndim(ary)
    axis = checked_axes(axis, ndim, "split")[0]
    n = np.shape(ary)[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("[split] number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = [0] + np.cumsum(sizes).tolist()
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return [dnp.getitem(ary, axis_index(ndim, axis, slice(start, stop)))
            for start, stop in zip(bounds[:-1], bounds[1:])]


def split(ary, indices_or_sections, axis=0):
    if np.ndim(indices_or_sections) == 0:
        n = np.shape(ary)[checked_axes(axis, np.ndim(ary), "split")[0]]
        if n % int(indices_or_sections):
            raise ValueError(f"[split] array split does not result in an equal division: "
                             f"{n} elements into {int(indices_or_sections)} sections. "
                             "Use array_split for unequal pieces.")
    return array_split(ary, indices_or_sections, axis)


dnp.export(globals())
